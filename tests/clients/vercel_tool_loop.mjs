// The Vercel AI SDK's default OpenAI provider (the Responses API) through streamparse serve: one tool, multi-step.
// Run by tests/clients/test_vercel_ai.py from a directory whose node_modules holds ai, @ai-sdk/openai and zod.
// usage: node vercel_tool_loop.mjs <generate|stream> <baseURL> <token> <model> <store: default|false>
// Prints "TOOL save_token <token>" when the tool runs, and last one line "RESULT <json>" with what came back.
import { readFileSync } from 'node:fs';
import * as ai from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { z } from 'zod';

const [mode, baseURL, token, modelName, store] = process.argv.slice(2);
const version = (pkg) => JSON.parse(readFileSync(new URL(`./node_modules/${pkg}/package.json`, import.meta.url))).version;
const versions = { ai: version('ai'), '@ai-sdk/openai': version('@ai-sdk/openai'), zod: version('zod') };
const stepCount = ai.isStepCount ?? ai.stepCountIs; // renamed in ai 7 (stepCountIs kept as an alias)
const instructionsKey = Number(versions.ai.split('.')[0]) >= 7 ? 'instructions' : 'system'; // `system` deprecated in 7

const openai = createOpenAI({ baseURL, apiKey: 'sk-local' });
const runs = [];
const tools = {
  save_token: ai.tool({
    description: 'Save a token.',
    inputSchema: z.object({ token: z.string() }),
    execute: async (input) => {
      runs.push(input);
      console.log(`TOOL save_token ${input.token}`);
      return `saved ${input.token}`;
    },
  }),
};
const settings = {
  model: openai(modelName), // openai(...) is the Responses API
  [instructionsKey]: 'You are a helpful assistant.',
  prompt: `Save the token ${token} with the tool, then say what the tool answered.`,
  tools,
  stopWhen: stepCount(3),
  maxRetries: 0,
  ...(store === 'false' && { providerOptions: { openai: { store: false } } }),
};

const describe = (steps) => steps.map((s) => ({
  finishReason: s.finishReason,
  text: s.text,
  toolCalls: s.toolCalls.map((c) => ({ toolName: c.toolName, input: c.input })),
  toolResults: s.toolResults.map((r) => ({ toolName: r.toolName, output: r.output })),
}));
const errors = [];
const result = { versions, mode, store, runs, errors };
try {
  if (mode === 'generate') {
    const r = await ai.generateText(settings);
    Object.assign(result, { steps: describe(r.steps), text: r.text });
  } else {
    const r = ai.streamText({ ...settings, onError: ({ error }) => { errors.push(String(error?.message ?? error)); } });
    const parts = [];
    for await (const part of (r.stream ?? r.fullStream)) { // `fullStream` renamed `stream` in ai 7
      parts.push(part.type);
      if (part.type === 'error') errors.push(String(part.error?.message ?? part.error));
    }
    Object.assign(result, { parts, steps: describe(await r.steps), text: await r.text });
  }
} catch (error) {
  errors.push(String(error?.stack ?? error));
}
console.log('RESULT ' + JSON.stringify(result));
process.exit(errors.length ? 1 : 0);
