// Builds the web renderer into static files the gateway serves (`dist/index.html` + `/assets/*`).
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig(({ command }) => {
  // A build is always React's production build, whatever NODE_ENV the caller has (vitest sets
  // `test`; a development build renders several times slower). Vite reads NODE_ENV after
  // loading this file.
  if (command === 'build') process.env.NODE_ENV = 'production';
  return config;
});

const config = {
  root,
  base: '/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    // The pdf.js worker is large by nature; everything heavy is split into lazy chunks.
    chunkSizeWarningLimit: 1500,
    // No inline scripts under the gateway's CSP: never inline the module-preload polyfill.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
};
