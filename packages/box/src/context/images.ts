/**
 * Images in the model view, added per model call (never written to the transcript):
 * - an image the user uploaded with a prompt becomes an image part of that user message (the
 *   JSONL names the upload in a hidden `[The user attached a file: <path>]` line; the bytes come
 *   from the attachment store, scaled like `read`'s);
 * - an image a tool returned (`read` of a PNG) cannot ride in a tool result on the
 *   OpenAI-compatible wire (both the xAI and the OpenAI-compatible providers send tool results as
 *   text), so the result says the image follows and a user message right after the tool results
 *   carries it as an image part (an `image_url` data URL on the wire);
 * - a model set up as text-only (`SENDBOX_MODEL_VISION=0`, or the settings panel) gets a note
 *   where each image would be, saying it cannot see it.
 */
import type { ModelMessage } from '../providers/types.ts';
import type { ContextLayer, LayerAgent } from './model-call.ts';
import { uploadedImageLoader, uploadFinder } from './upload-images.ts';

export interface ModelImageData {
  /** Base64. */
  data: string;
  mediaType: string;
}

export interface ImageViewOptions {
  /** False: the model is text-only; images become notes. */
  vision: boolean;
  /** The image the user uploaded at this sandbox path, scaled for the model; null when it is not an image. */
  uploadedImage(sandboxPath: string): Promise<ModelImageData | null>;
}

const ATTACHED = /\[The user attached a file: ([^\]\n]+)\]/g;

export const TEXT_ONLY_NOTE = (what: string) =>
  `[${what} is not shown: this model is set up as text-only (SENDBOX_MODEL_VISION=0 or the Vision switch ` +
  'in the settings panel), so you cannot see images. Tell the user if the image matters.]';

type ToolContent = Extract<ModelMessage, { role: 'tool' }>['content'];
type UserContent = Exclude<Extract<ModelMessage, { role: 'user' }>['content'], string>;

export async function withImages(
  messages: readonly ModelMessage[],
  options: ImageViewOptions,
): Promise<ModelMessage[]> {
  const out: ModelMessage[] = [];
  for (const message of messages) {
    if (message.role === 'user') out.push(await withUploads(message, options));
    else if (message.role === 'tool') out.push(...toolImages(message.content, options.vision));
    else out.push(message);
  }
  return out;
}

async function withUploads(
  message: Extract<ModelMessage, { role: 'user' }>,
  options: ImageViewOptions,
): Promise<ModelMessage> {
  const text =
    typeof message.content === 'string'
      ? message.content
      : message.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
  const paths = [...text.matchAll(ATTACHED)].map((m) => m[1]!);
  if (paths.length === 0) return message;
  const extra: UserContent = [];
  for (const sandboxPath of paths) {
    const image = await options.uploadedImage(sandboxPath);
    if (!image) continue;
    extra.push(
      options.vision
        ? { type: 'image', image: image.data, mediaType: image.mediaType }
        : { type: 'text', text: TEXT_ONLY_NOTE(`The image ${sandboxPath}`) },
    );
  }
  if (extra.length === 0) return message;
  const content: UserContent =
    typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : [...message.content];
  return { ...message, content: [...content, ...extra] };
}

/** The tool message with its images taken out of the results, and the user message that carries them. */
function toolImages(content: ToolContent, vision: boolean): ModelMessage[] {
  const images: UserContent = [];
  const results = content.map((part) => {
    if (part.type !== 'tool-result' || part.output.type !== 'content') return part;
    const texts: string[] = [];
    for (const item of part.output.value) {
      if (item.type === 'text') texts.push(item.text);
      else if (item.type === 'image-data') {
        if (vision) {
          images.push({
            type: 'text',
            text: `The image from your ${part.toolName} call (${part.toolCallId}):`,
          });
          images.push({ type: 'image', image: item.data, mediaType: item.mediaType });
          texts.push('[The image is in the next message.]');
        } else texts.push(TEXT_ONLY_NOTE('The image'));
      }
    }
    return { ...part, output: { type: 'text' as const, value: texts.join('\n') } };
  });
  const tool: ModelMessage = { role: 'tool', content: results };
  return images.length ? [tool, { role: 'user', content: images }] : [tool];
}

/** The images of one agent's model view as a context layer; `vision()` is read at every call (the panel may change it). */
export function imageLayer(agent: LayerAgent, vision: () => boolean): ContextLayer {
  const uploadedImage = uploadedImageLoader(uploadFinder(() => agent.entries(), agent.paths.attachments));
  return {
    name: 'images',
    messages: (messages) => withImages(messages, { vision: vision(), uploadedImage }),
  };
}
