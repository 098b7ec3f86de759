// ESLint (pinned in package.json) over the lab's own JavaScript: the
// browser scripts in web/ and their unit tests in webtest/ (make lint-js,
// run by make test). The recommended rules, plus strict equality and const
// where nothing reassigns.
import js from "@eslint/js";
import globals from "globals";

const strict = {
  eqeqeq: ["error", "always"],
  "prefer-const": "error",
  "no-var": "error",
  // an unused catch binding or argument documents the shape it ignores
  "no-unused-vars": ["error", { args: "none", caughtErrors: "none" }],
};

export default [
  { ignores: ["web/echarts.min.js", "node_modules/", "cmd/", "dist/", "e2e/"] },
  js.configs.recommended,
  {
    files: ["web/**/*.js"],
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: "script",
      // lab.js and present.js are also Node modules for their tests; Go is
      // wasm_exec.js's, echarts ECharts'.
      globals: { ...globals.browser, module: "readonly", Go: "readonly", echarts: "readonly" },
    },
    rules: strict,
  },
  {
    // the worker runs in a worker's global scope
    files: ["web/sim-worker.js"],
    languageOptions: { globals: { ...globals.worker, Go: "readonly" } },
  },
  {
    // the host page's helper is written for old browsers (ES5, no const)
    files: ["web/embed.js"],
    rules: { "no-var": "off", "prefer-const": "off" },
  },
  {
    files: ["webtest/**/*.js"],
    languageOptions: { ecmaVersion: 2023, sourceType: "commonjs", globals: globals.node },
    rules: strict,
  },
];
