// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "**/.turbo/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": "error",
      eqeqeq: ["error", "smart"],
      // A named `z` is zod's whole namespace object: a bundle then keeps all of zod, locales included.
      "no-restricted-syntax": [
        "error",
        {
          selector: "ImportDeclaration[source.value='zod'] > ImportSpecifier[imported.name='z']",
          message: 'Use `import * as z from "zod"`.',
        },
      ],
    },
  },
  {
    files: ["**/*.test.ts", "test/**/*.ts", "**/bin/**", "**/src/main.ts", "bench/**"],
    rules: { "no-console": "off" },
  },
);
