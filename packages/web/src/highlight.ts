/**
 * Code highlighting with a fine-grained shiki build, loaded on first use: the core, the
 * JavaScript regex engine (no WebAssembly, which the page's CSP does not allow), a few common
 * languages and one light plus one dark theme. Nothing here is in the initial bundle.
 */
import type { HighlighterCore, ThemedTokenWithVariants } from 'shiki/core';

/** Each language is its own lazy chunk, fetched only when a block in that language shows up. */
const LANGUAGES = {
  typescript: () => import('shiki/langs/typescript.mjs'),
  tsx: () => import('shiki/langs/tsx.mjs'),
  javascript: () => import('shiki/langs/javascript.mjs'),
  jsx: () => import('shiki/langs/jsx.mjs'),
  json: () => import('shiki/langs/json.mjs'),
  bash: () => import('shiki/langs/bash.mjs'),
  python: () => import('shiki/langs/python.mjs'),
  html: () => import('shiki/langs/html.mjs'),
  css: () => import('shiki/langs/css.mjs'),
  yaml: () => import('shiki/langs/yaml.mjs'),
  sql: () => import('shiki/langs/sql.mjs'),
  diff: () => import('shiki/langs/diff.mjs'),
  markdown: () => import('shiki/langs/markdown.mjs'),
} as const;
type Language = keyof typeof LANGUAGES;

const ALIASES: Readonly<Record<string, Language>> = {
  ts: 'typescript', mts: 'typescript', cts: 'typescript', js: 'javascript', mjs: 'javascript',
  cjs: 'javascript', sh: 'bash', shell: 'bash', zsh: 'bash', console: 'bash', py: 'python',
  yml: 'yaml', md: 'markdown', jsonc: 'json', patch: 'diff', htm: 'html',
}; // prettier-ignore

/** The highlighter language for a fence's info string, or null for plain text. */
export function languageFor(info: string | undefined): Language | null {
  if (!info) return null;
  const name = info.trim().toLowerCase();
  if (name in LANGUAGES) return name as Language;
  return ALIASES[name] ?? null;
}

// The light theme's high-contrast variant: plain github-light's red and orange fall under 4.5:1 on the code background.
export const THEMES = { light: 'github-light-high-contrast', dark: 'github-dark' } as const;

let highlighter: Promise<HighlighterCore> | null = null;
const loadedLanguages = new Map<Language, Promise<void>>();

function getHighlighter(): Promise<HighlighterCore> {
  highlighter ??= (async () => {
    const [{ createHighlighterCore }, { createJavaScriptRegexEngine }, light, dark] = await Promise.all([
      import('shiki/core'),
      import('shiki/engine/javascript'),
      import('shiki/themes/github-light-high-contrast.mjs'),
      import('shiki/themes/github-dark.mjs'),
    ]);
    return createHighlighterCore({
      themes: [light.default, dark.default],
      langs: [],
      engine: createJavaScriptRegexEngine(),
    });
  })();
  return highlighter;
}

/** Tokens for `code`, each with a light and a dark colour (`variants.light` / `variants.dark`). */
export async function highlight(code: string, language: Language): Promise<ThemedTokenWithVariants[][]> {
  const core = await getHighlighter();
  let loading = loadedLanguages.get(language);
  if (!loading) {
    loading = LANGUAGES[language]().then((module) => core.loadLanguage(module.default));
    loadedLanguages.set(language, loading);
  }
  await loading;
  return core.codeToTokensWithThemes(code, { lang: language, themes: THEMES });
}
