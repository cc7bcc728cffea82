/**
 * Must be evaluated before any zod schema is built (import it first): the page runs under a
 * CSP without 'unsafe-eval', so zod's `new Function` fast path is switched off, and with it
 * the probe that the browser would report as a CSP violation even though zod catches it.
 */
import { config } from 'zod';

config({ jitless: true });
