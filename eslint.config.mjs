// The linter of the pages' JavaScript: report/static/*.js (inlined into report.html, compare and
// matrix) and screens/annotator/page.js (served by the annotator). Pinned in package.json / package-lock.json;
// `npm ci --no-audit --no-fund && npx eslint pytest_uiground` runs it (.ci/run, README).
import js from "@eslint/js";
import globals from "globals";

export default [
  {ignores: ["node_modules/", ".venv/", "build/", "dist/"]},
  js.configs.recommended,
  {
    files: ["pytest_uiground/**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "script",  // classic inline or served scripts, not modules
      globals: {...globals.browser},
    },
    linterOptions: {reportUnusedDisableDirectives: "error"},
    rules: {
      "no-unused-vars": ["error", {args: "none", caughtErrors: "none"}],
      "eqeqeq": ["error", "always", {null: "ignore"}],
      "no-implied-eval": "error",
      "no-new-func": "error",
      "no-eval": "error",
      // user and model strings go in as text (textContent, attributes), never parsed as markup
      "no-restricted-properties": ["error",
        {property: "innerHTML", message: "insert text with textContent: the string may be a model's output"},
        {property: "outerHTML", message: "insert text with textContent: the string may be a model's output"},
        {property: "insertAdjacentHTML", message: "build elements; the string may be a model's output"},
        {object: "document", property: "write", message: "build elements; the string may be a model's output"}],
    },
  },
  {
    // report.html inlines sort.js and browser.js into one <script>: each keeps its strictness inside
    // its own function, so neither makes the other strict.
    files: ["pytest_uiground/report/static/*.js"],
    rules: {
      "strict": ["error", "function"],
      // the report works from disk, offline: it requests nothing
      "no-restricted-globals": ["error",
        {name: "fetch", message: "report.html fetches nothing: it is one file opened from disk"},
        {name: "XMLHttpRequest", message: "report.html fetches nothing: it is one file opened from disk"},
        {name: "WebSocket", message: "report.html fetches nothing: it is one file opened from disk"}],
    },
  },
  {
    files: ["pytest_uiground/screens/annotator/page.js"],
    rules: {"strict": ["error", "global"]},
  },
];
