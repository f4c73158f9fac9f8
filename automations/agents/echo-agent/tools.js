// Tools of the built-in example agent.

export const tools = {
  word_count: {
    description: 'Counts the words of a text.',
    parameters: {
      type: 'object',
      required: ['text'],
      properties: { text: { type: 'string' } },
    },
    run(args) {
      const text = typeof args?.text === 'string' ? args.text.trim() : '';
      return { words: text === '' ? 0 : text.split(/\s+/).length };
    },
  },
};
