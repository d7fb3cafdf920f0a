// Typed linting: no-floating-promises and friends catch the bugs a crawler full of sockets breeds.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import { boundaries } from "./eslint.boundaries.js";

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "out/**", "tmp/**", "bench-results/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ["./packages/*/tsconfig.json", "./tsconfig.tests.json"], tsconfigRootDir: import.meta.dirname },
      globals: { process: "readonly", console: "readonly", Buffer: "readonly", setTimeout: "readonly", clearTimeout: "readonly", setInterval: "readonly", clearInterval: "readonly", setImmediate: "readonly", URL: "readonly", TextDecoder: "readonly", TextEncoder: "readonly", AbortController: "readonly", AbortSignal: "readonly", performance: "readonly", queueMicrotask: "readonly" },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true, allowBoolean: true }],
      "@typescript-eslint/no-unnecessary-type-assertion": "off",
    },
  },
  ...boundaries,
  {
    files: ["**/*.js", "**/*.mjs"],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The status pages' script runs in the browser.
    files: ["packages/shardcrawl/src/node/ui/**/*.js"],
    languageOptions: { globals: { window: "readonly", document: "readonly", fetch: "readonly" } },
  },
  {
    // Tests poke at untyped JSON and library internals; keep the safety rules, relax the any-rules.
    files: ["**/test/**/*.ts", "test/**/*.ts"],
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
);
