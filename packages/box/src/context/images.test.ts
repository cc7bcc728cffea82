import { expect, it } from 'vitest';
import type { ModelMessage } from '../providers/types.ts';
import { TEXT_ONLY_NOTE, withImages, type ImageViewOptions } from './images.ts';

const PNG = { data: 'iVBORw0KGgo=', mediaType: 'image/png' };
const options = (vision: boolean): ImageViewOptions => ({
  vision,
  uploadedImage: (p) => Promise.resolve(p === 'uploads/shot.png' ? PNG : null),
});

const upload: ModelMessage = {
  role: 'user',
  content: [
    {
      type: 'text',
      text: '[t0u]\nWhat is in this?\n\n[SAND_HIDDEN_PROMPT][The user attached a file: uploads/shot.png]\n[The user attached a file: uploads/notes.pdf]',
    },
  ],
};
const readCall: ModelMessage[] = [
  {
    role: 'assistant',
    content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'read', input: { path: 'a.png' } }],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'c1',
        toolName: 'read',
        output: {
          type: 'content',
          value: [
            { type: 'text', text: 'Image a.png (4×4 px):' },
            { type: 'image-data', data: PNG.data, mediaType: 'image/png' },
          ],
        },
      },
    ],
  },
];

it('adds an uploaded image to its user message as an image part (not the PDF)', async () => {
  const [message] = await withImages([upload], options(true));
  expect(message).toEqual({
    role: 'user',
    content: [...(upload.content as object[]), { type: 'image', image: PNG.data, mediaType: 'image/png' }],
  });
});

it('moves a tool result image into a user message after the results (the OpenAI-compatible bridge)', async () => {
  const view = await withImages(readCall, options(true));
  expect(view).toEqual([
    readCall[0],
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'c1',
          toolName: 'read',
          output: { type: 'text', value: 'Image a.png (4×4 px):\n[The image is in the next message.]' },
        },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'The image from your read call (c1):' },
        { type: 'image', image: PNG.data, mediaType: 'image/png' },
      ],
    },
  ]);
});

it('gives a text-only model a note instead of each image', async () => {
  const view = await withImages([upload, ...readCall], options(false));
  expect(view).toHaveLength(3);
  expect(JSON.stringify(view)).not.toContain(PNG.data);
  expect((view[0]!.content as Array<{ text?: string }>).at(-1)?.text).toBe(
    TEXT_ONLY_NOTE('The image uploads/shot.png'),
  );
  expect(view[2]).toMatchObject({
    role: 'tool',
    content: [{ output: { type: 'text', value: `Image a.png (4×4 px):\n${TEXT_ONLY_NOTE('The image')}` } }],
  });
});
