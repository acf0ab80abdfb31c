// Bundles src/main.jsx into dist/graphiql.js (IIFE, minified) and dist/graphiql.css.
// Run by `npm run build`, which server/build.rs calls when dist/ is stale.
import * as esbuild from 'esbuild';

// The bundle must not reach any other origin: fail the build if a CSS url() or @import
// points at one (GraphiQL 3 inlines its fonts and icons as data: URLs).
const sameOriginOnly = {
  name: 'same-origin-only',
  setup(build) {
    build.onResolve({ filter: /^(https?:)?\/\// }, (args) => ({
      errors: [{ text: `remote resource ${args.path} (imported by ${args.importer}) would break air-gapped use` }],
    }));
  },
};

await esbuild.build({
  entryPoints: { graphiql: 'src/main.jsx' },
  outdir: 'dist',
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  minify: true,
  // Keep the bundled packages' license notices (MIT and friends) at the end of the files.
  legalComments: 'eof',
  jsx: 'automatic',
  define: { 'process.env.NODE_ENV': '"production"' },
  logLevel: 'warning',
  plugins: [sameOriginOnly],
});
