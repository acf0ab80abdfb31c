import { defineConfig } from 'vite';

// The client is embedded into the `verdict` binary by server/build.rs, which serves
// dist/index.html for the client's paths and dist/assets/* with immutable caching.
export default defineConfig({
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    // No inline scripts or data-URL modules: the CSP is script-src 'self'.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: true,
  },
});
