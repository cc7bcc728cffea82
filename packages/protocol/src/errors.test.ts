import { describe, expect, test } from 'vitest';
import { rejectionText, suggestEnvName, validateSendMessage } from './errors.ts';

/** The problem lines for an input that must be rejected. */
function problems(input: unknown): string[] {
  const result = validateSendMessage(input);
  if (result.ok) throw new Error(`expected a rejection for ${JSON.stringify(input)}`);
  return result.problems;
}

const options = (...labels: string[]) => labels.map((label) => ({ label }));

describe('validateSendMessage: message shape', () => {
  test('a rejection is returned, never thrown, with a heading and one line per problem', () => {
    const result = validateSendMessage({ type: 'text', content: 5, url: 7 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.message.split('\n')).toEqual([
      'Not delivered: this send_message call has 2 problems. Fix them and call send_message again.',
      '- `content` must be a string; you sent the number 5.',
      '- `url` must be a string; you sent the number 7.',
    ]);
  });

  test('a single problem gets a singular heading', () => {
    expect(rejectionText(['x'])).toBe(
      'Not delivered: this send_message call has a problem. Fix it and call send_message again.\n- x',
    );
  });

  test('the model-facing tool name is used in the text', () => {
    const result = validateSendMessage('hi', { toolName: 'SendMessage' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.message).toMatch(
      /^Not delivered: this SendMessage call has a problem\. Fix it and call SendMessage again\./,
    );
    expect(result.problems[0]).toMatch(/^SendMessage takes one JSON object of fields/);
  });

  test('received strings are quoted, with line breaks escaped, and truncated', () => {
    const long = `line one\n${'x'.repeat(200)}`;
    const [reply] = problems({ type: 'text', content: 'hi', reply_to: long });
    // 60 characters are kept: `line one\n` (10, with the break escaped) and 50 x.
    expect(reply).toContain(`you sent \`line one\\n${'x'.repeat(50)}…\`.`);
  });

  test('the same problem is never listed twice', () => {
    const list = problems({ type: 'text', content: 'a', foo: 1 });
    expect(new Set(list).size).toBe(list.length);
  });
});

describe('validateSendMessage: wrong JSON types', () => {
  test('not an object', () => {
    expect(problems(42)).toEqual([
      'send_message takes one JSON object of fields, such as {"type":"text","content":"Done: the report is attached below."}; you sent the number 42.',
    ]);
  });

  test('plain text instead of an object points at content', () => {
    expect(problems('All done!')[0]).toMatch(
      /you sent the string `All done!`\. Plain text is not delivered: put it in `content` with type text\.$/,
    );
  });

  test('JSON text instead of an object says to pass the object', () => {
    expect(problems('{"type":"text","content":"hi"}')[0]).toMatch(
      /It looks like JSON text: pass the object itself\.$/,
    );
  });

  test('a field of the wrong type names the expected type and what was sent', () => {
    expect(problems({ type: 'text', content: ['a'] })).toEqual([
      '`content` must be a string; you sent a list of 1 item.',
    ]);
    expect(
      problems({ type: 'widget', widget: { prompt: 'Q', options: options('a'), multiSelect: 'yes' } }),
    ).toEqual(['`widget.multiSelect` must be true or false; you sent the string `yes`.']);
  });

  test('null says to leave the field out', () => {
    expect(problems({ type: 'text', content: 'x', reply_to: null })).toEqual([
      '`reply_to` must be a string; you sent null. Leave a field out instead of sending null.',
    ]);
  });

  test('an option written as a bare string shows the object form', () => {
    expect(problems({ type: 'widget', widget: { prompt: 'Q', options: ['Yes', { label: 'No' }] } })).toEqual([
      '`widget.options[0]` must be an object; you sent the string `Yes`. Write each option as an object: {"label":"Yes"}.',
    ]);
  });

  test('an image written as a bare string shows the object form', () => {
    expect(problems({ type: 'text', images: ['https://x.test/a.png'] })).toEqual([
      '`images[0]` must be an object; you sent the string `https://x.test/a.png`. Write each image as an object: {"url":"https://x.test/a.png"}.',
    ]);
  });
});

describe('validateSendMessage: type', () => {
  test('an unknown type lists the valid ones', () => {
    expect(problems({ type: 'note', content: 'x' })).toEqual([
      '`type` must be one of text, attachment, widget, cursor-agent or secret-request; you sent the string `note`.',
    ]);
  });

  test('a near miss suggests the type it probably means', () => {
    expect(problems({ type: 'file', url: 'https://x.test/a.pdf' })[0]).toMatch(/Did you mean attachment\?$/);
    expect(problems({ type: 'Question' })[0]).toMatch(/Did you mean widget\?$/);
    expect(problems({ type: 'secret' })[0]).toMatch(/Did you mean secret-request\?$/);
  });

  test('a missing type says which values it takes', () => {
    expect(problems({ content: 'x' })).toEqual([
      '`type` is missing. Set it to one of: text, attachment, widget, cursor-agent, secret-request.',
    ]);
  });
});

describe('validateSendMessage: unknown fields', () => {
  test('a familiar wrong name says where the content goes', () => {
    expect(problems({ type: 'text', message: 'hi' })).toEqual([
      '`message` is not a field here; remove it. Put the words in `content`.',
      'type text needs `content` (the words to show) or `images`; you sent neither.',
    ]);
    expect(problems({ type: 'text', content: 'hi', replyTo: 't1u' })).toEqual([
      '`replyTo` is not a field here; remove it. The field is spelled `reply_to`.',
    ]);
  });

  test('any other unknown field lists the fields of that level', () => {
    expect(problems({ type: 'text', content: 'hi', mood: 'happy' })).toEqual([
      '`mood` is not a field here; remove it. The fields here are: type, content, images, reply_to, url, alt, widget, bcId, title, secret.',
    ]);
    expect(
      problems({ type: 'widget', widget: { prompt: 'Q', options: [{ label: 'a', color: 'red' }] } }),
    ).toEqual([
      '`widget.options[0].color` is not a field here; remove it. The fields here are: label, value, description, style.',
    ]);
  });
});

describe('validateSendMessage: fields of another type', () => {
  test.each([
    [{ type: 'text', content: 'hi', url: 'https://x.test/a.pdf' }, 'url', 'attachment', 'text'],
    [
      { type: 'attachment', url: 'https://x.test/a.pdf', widget: { prompt: 'Q', options: options('a') } },
      'widget',
      'widget',
      'attachment',
    ],
    [
      { type: 'attachment', url: 'https://x.test/a.pdf', images: [{ url: 'https://x.test/b.png' }] },
      'images',
      'text',
      'attachment',
    ],
    [
      { type: 'widget', widget: { prompt: 'Q', options: options('a') }, content: 'pick one' },
      'content',
      'text',
      'widget',
    ],
    [{ type: 'cursor-agent', bcId: 'bc-1', reply_to: 't1u' }, 'reply_to', 'text', 'cursor-agent'],
    [{ type: 'text', content: 'hi', title: 'T' }, 'title', 'cursor-agent', 'text'],
    [{ type: 'text', content: 'hi', secret: { label: 'k', name: 'K' } }, 'secret', 'secret-request', 'text'],
    [{ type: 'text', content: 'hi', bcId: 'bc-1' }, 'bcId', 'cursor-agent', 'text'],
    [{ type: 'text', content: 'hi', alt: 'caption' }, 'alt', 'attachment', 'text'],
  ])('%j is rejected for `%s`', (input, field, owner, type) => {
    expect(problems(input)).toEqual([
      `\`${field}\` belongs to type ${owner}, not ${type}. Remove it, or send it in a separate call with type ${owner}.`,
    ]);
  });

  test('empty strings and lists do not count as sent (models often fill every key)', () => {
    expect(validateSendMessage({ type: 'text', content: 'hi', url: '', images: [], bcId: '  ' }).ok).toBe(
      true,
    );
  });
});

describe('validateSendMessage: text', () => {
  test('needs content or images', () => {
    expect(problems({ type: 'text' })).toEqual([
      'type text needs `content` (the words to show) or `images`; you sent neither.',
    ]);
  });

  test('content of only spaces is empty after trimming', () => {
    expect(problems({ type: 'text', content: '   \n ' })).toEqual([
      'type text needs `content` (the words to show) or `images`; you sent an empty `content` and no images.',
    ]);
  });

  test('images alone are enough', () => {
    expect(validateSendMessage({ type: 'text', images: [{ url: 'file:///tmp/a.png' }] }).ok).toBe(true);
  });

  test('each image URL needs a file:// or https:// scheme', () => {
    expect(
      problems({
        type: 'text',
        content: 'see',
        images: [{ url: 'https://x.test/a.png' }, { url: '/tmp/b.png' }],
      }),
    ).toEqual([
      '`images[1].url` needs a URL with a file:// or https:// scheme; you sent `/tmp/b.png`. For a file you made, use `file:///tmp/b.png`.',
    ]);
  });

  test('an image needs a url', () => {
    expect(problems({ type: 'text', images: [{ alt: 'cat' }] })).toEqual([
      '`images[0].url` is missing. Give each image a file:///absolute/path or https:// URL.',
    ]);
  });

  test('reply_to must be an address; brackets are pointed out', () => {
    expect(problems({ type: 'text', content: 'yes', reply_to: '[t3u]' })).toEqual([
      '`reply_to` must be a message address such as t3u; you sent `[t3u]`. Drop the brackets: `t3u`.',
    ]);
    expect(problems({ type: 'text', content: 'yes', reply_to: 'the last one' })).toEqual([
      '`reply_to` must be a message address such as t3u; you sent `the last one`. Copy the tag from the start of the user message, without its brackets.',
    ]);
  });
});

describe('validateSendMessage: attachment', () => {
  test('the url needs a file:// or https:// scheme (brief example)', () => {
    expect(problems({ type: 'attachment', url: 'C:/x.pdf' })).toEqual([
      'type attachment needs `url` with a file:// or https:// scheme; you sent `C:/x.pdf`. Use file:///absolute/path for a file you made, or an https:// link.',
    ]);
  });

  test('a missing url', () => {
    expect(problems({ type: 'attachment' })).toEqual([
      'type attachment needs `url` with a file:// or https:// scheme; you sent none. Use file:///absolute/path for a file you made, or an https:// link.',
    ]);
  });

  test('plain http suggests https', () => {
    expect(problems({ type: 'attachment', url: 'http://x.test/a.pdf' })).toEqual([
      'type attachment needs `url` with a file:// or https:// scheme; you sent `http://x.test/a.pdf`. Plain http is not accepted; use `https://x.test/a.pdf`.',
    ]);
  });

  test('a bare absolute path suggests its file:// form', () => {
    expect(problems({ type: 'attachment', url: '/home/box/out.csv' })[0]).toMatch(
      /For a file you made, use `file:\/\/\/home\/box\/out\.csv`\.$/,
    );
  });

  test('file:// needs an absolute path', () => {
    expect(problems({ type: 'attachment', url: 'file://out/report.pdf' })).toEqual([
      'type attachment needs `url` with an absolute path after file://; you sent `file://out/report.pdf`. Write three slashes before the path, as in file:///home/box/report.pdf.',
    ]);
  });

  test('spaces in a url are refused with the fix', () => {
    expect(problems({ type: 'attachment', url: 'file:///tmp/my report.pdf' })).toEqual([
      'type attachment needs `url` without spaces or line breaks; you sent `file:///tmp/my report.pdf`. Write a space in a path as %20.',
    ]);
  });

  test('a scheme with nothing after it', () => {
    expect(problems({ type: 'attachment', url: 'https://' })).toEqual([
      'type attachment needs `url` with a file or host after https://; you sent `https://`.',
    ]);
  });

  test('schemes are matched without regard to case', () => {
    expect(validateSendMessage({ type: 'attachment', url: 'HTTPS://x.test/A.pdf' }).ok).toBe(true);
  });
});

describe('validateSendMessage: widget', () => {
  test('needs a widget', () => {
    expect(problems({ type: 'widget' })).toEqual([
      'type widget needs `widget` with a `prompt` and 1 to 6 `options`; you sent none. Example: {"type":"widget","widget":{"prompt":"Deploy now?","options":[{"label":"Yes"},{"label":"Not yet"}]}}',
    ]);
  });

  test('needs a prompt and at least one option', () => {
    expect(problems({ type: 'widget', widget: { options: [] } })).toEqual([
      '`widget.prompt` is missing. Write the question the user should answer.',
      '`widget.options` is empty; it needs at least 1 item. Give 1 to 6 options, each like {"label":"Yes"}.',
    ]);
    expect(problems({ type: 'widget', widget: { prompt: '  ', options: options('a') } })).toEqual([
      '`widget.prompt` is empty. Write the question the user should answer.',
    ]);
  });

  test('too many options', () => {
    expect(
      problems({
        type: 'widget',
        widget: { prompt: 'Q', options: options('1', '2', '3', '4', '5', '6', '7') },
      }),
    ).toEqual([
      '`widget.options` has 7 options; a widget takes 1 to 6. Keep the ones that matter most, or ask in two steps.',
    ]);
    expect(
      validateSendMessage({
        type: 'widget',
        widget: { prompt: 'Q', options: options('1', '2', '3', '4', '5', '6') },
      }).ok,
    ).toBe(true);
  });

  test('a label over 120 characters says its length and the limit', () => {
    expect(problems({ type: 'widget', widget: { prompt: 'Q', options: options('x'.repeat(121)) } })).toEqual([
      '`widget.options[0].label` is 121 characters; a label may have at most 120. Shorten it and move the detail into the option `description`.',
    ]);
    expect(
      validateSendMessage({ type: 'widget', widget: { prompt: 'Q', options: options('x'.repeat(120)) } }).ok,
    ).toBe(true);
  });

  test('the limit counts the trimmed label', () => {
    expect(
      validateSendMessage({
        type: 'widget',
        widget: { prompt: 'Q', options: options(` ${'x'.repeat(120)} `) },
      }).ok,
    ).toBe(true);
  });

  test('an option description over 400 characters', () => {
    const widget = { prompt: 'Q', options: [{ label: 'a', description: 'd'.repeat(401) }] };
    expect(problems({ type: 'widget', widget })).toEqual([
      '`widget.options[0].description` is 401 characters; a description may have at most 400. Shorten it.',
    ]);
  });

  test('helpText over 400 characters', () => {
    const widget = { prompt: 'Q', helpText: 'h'.repeat(450), options: options('a') };
    expect(problems({ type: 'widget', widget })).toEqual([
      '`widget.helpText` is 450 characters; a description may have at most 400. Shorten it.',
    ]);
  });

  test('an empty option label', () => {
    expect(problems({ type: 'widget', widget: { prompt: 'Q', options: options('') } })).toEqual([
      '`widget.options[0].label` is empty. Give every option a short label.',
    ]);
  });

  test('an unknown style lists the styles', () => {
    expect(
      problems({ type: 'widget', widget: { prompt: 'Q', options: [{ label: 'a', style: 'red' }] } }),
    ).toEqual([
      '`widget.options[0].style` must be one of default, primary or danger; you sent the string `red`.',
    ]);
  });

  test('labels must differ, ignoring case', () => {
    expect(
      problems({ type: 'widget', widget: { prompt: 'Q', options: options('Yes', 'No', 'yes') } }),
    ).toEqual([
      '`widget.options[2].label` `yes` repeats the label of option 0 (`Yes`); give each option its own label.',
    ]);
  });
});

describe('validateSendMessage: cursor-agent', () => {
  test('needs bcId', () => {
    expect(problems({ type: 'cursor-agent', title: 'Fix CI' })).toEqual([
      'type cursor-agent needs `bcId`, the id of the Cursor cloud agent the card opens; you sent none.',
    ]);
    expect(problems({ type: 'cursor-agent', bcId: ' ' })).toEqual([
      'type cursor-agent needs `bcId`, the id of the Cursor cloud agent the card opens; you sent an empty string.',
    ]);
  });
});

describe('validateSendMessage: secret-request', () => {
  test('needs secret', () => {
    expect(problems({ type: 'secret-request' })).toEqual([
      'type secret-request needs `secret` with a `label` and a target: `name` (an environment variable such as GITHUB_TOKEN) or `connector` plus `field`; you sent none.',
    ]);
  });

  test('needs a label', () => {
    expect(problems({ type: 'secret-request', secret: { name: 'GITHUB_TOKEN' } })).toEqual([
      '`secret.label` is missing. Say what you are asking for, e.g. "GitHub token".',
    ]);
  });

  test('a label over 120 characters', () => {
    expect(problems({ type: 'secret-request', secret: { label: 'k'.repeat(125), name: 'K' } })).toEqual([
      '`secret.label` is 125 characters; a label may have at most 120. Shorten it and move the detail into `secret.description`.',
    ]);
  });

  test('a description over 400 characters', () => {
    expect(
      problems({ type: 'secret-request', secret: { label: 'k', description: 'd'.repeat(500), name: 'K' } }),
    ).toEqual(['`secret.description` is 500 characters; a description may have at most 400. Shorten it.']);
  });

  test('needs a target', () => {
    expect(problems({ type: 'secret-request', secret: { label: 'GitHub token' } })).toEqual([
      '`secret` needs a target: `name` for an environment variable of your tools (such as GITHUB_TOKEN), or `connector` and `field` for a connector credential; you sent neither.',
    ]);
  });

  test('not two targets', () => {
    expect(
      problems({
        type: 'secret-request',
        secret: { label: 'k', name: 'K', connector: 'slack', field: 'token' },
      }),
    ).toEqual([
      '`secret` names two targets, an environment variable (`name`) and a connector (`connector`/`field`); keep only one.',
    ]);
  });

  test('a connector needs its field, and a field its connector', () => {
    expect(problems({ type: 'secret-request', secret: { label: 'k', connector: 'slack' } })).toEqual([
      '`secret.field` is missing: say which credential field of connector `slack` the secret fills.',
    ]);
    expect(problems({ type: 'secret-request', secret: { label: 'k', field: 'token' } })).toEqual([
      '`secret.connector` is missing: say which connector the field `token` belongs to.',
    ]);
  });

  test('a bad env name explains the rule and suggests a valid one', () => {
    expect(problems({ type: 'secret-request', secret: { label: 'k', name: 'my-api.key' } })).toEqual([
      '`secret.name` must be an environment variable name: capital letters, digits and underscores, not starting with a digit; you sent `my-api.key`. Try `MY_API_KEY`.',
    ]);
    expect(problems({ type: 'secret-request', secret: { label: 'k', name: '1PASSWORD' } })[0]).toMatch(
      /Try `_1PASSWORD`\.$/,
    );
  });

  test('suggestEnvName always yields a valid name', () => {
    for (const name of ['', '---', 'a b', '9lives', 'ok_NAME']) {
      expect(suggestEnvName(name)).toMatch(/^[A-Z_][A-Z0-9_]*$/);
    }
  });
});
