/**
 * Node-side facts about the built web UI, for the gateway that serves it. The browser code
 * starts at `main.tsx`; nothing here is bundled into the page.
 */
import { fileURLToPath } from 'node:url';

/** Where `npm run build -w @sendbox/web` writes `index.html` and `assets/`. */
export const webDistDir: string = fileURLToPath(new URL('../dist/', import.meta.url));
