// A plugin module for the `plugins` config section: a factory that gets the entry's `options`.
import { ToolError } from 'a2e-gateway/plugin';

export default function wordTools(options) {
  const minLength = options.min_length ?? 1;
  return {
    name: 'word-tools',
    listTools: () => [
      {
        name: 'count_words',
        description: `Count the words of at least ${minLength} letters in a text`,
        input_parameters: [{ name: 'text', type: 'string', description: 'The text', required: true }],
        tags: ['text'],
        idempotent: true,
      },
    ],
    async executeTool(_name, args, ctx) {
      const words = args.text.split(/\s+/).filter((w) => w.length >= minLength);
      if (words.length === 0) throw new ToolError('no words in the text; send some'); // → success: false
      ctx.emit('progress', { pct: 100, message: `counted ${words.length} words` }); // streamed when asked for
      return { words: words.length };
    },
  };
}
