import assert from "node:assert/strict";
import { test } from "node:test";
import { words } from "../src/words.js";

test("splits on anything but letters and digits", () => {
  assert.deepEqual(words("Hello, world! 42"), ["Hello", "world", "42"]);
});

test("finds no words in punctuation", () => {
  assert.deepEqual(words("?!"), []);
});
