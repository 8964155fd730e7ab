// The JavaScript lint gate (npm run lint, run by `make test`): ESLint's recommended rules
// over the module, the editor page, the tests and the benchmarks, with the globals of where
// each runs: the page in the browser, the tests and benchmarks in Node (their page.evaluate
// callbacks in the browser), the module in both.
import js from '@eslint/js';
import globals from 'globals';

export default [
  { ignores: ['node_modules/', 'editor/dist/'] },
  js.configs.recommended,
  { languageOptions: { ecmaVersion: 2024, sourceType: 'module' } },
  { files: ['editor/**/*.js'], languageOptions: { globals: globals.browser } },
  { files: ['marionette.mjs'], languageOptions: { globals: { ...globals.browser, ...globals.node } } },
  {
    files: ['test/**/*.mjs', 'bench/**/*.mjs', 'eslint.config.js'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
];
