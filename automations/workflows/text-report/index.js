// Built-in example workflow: three named steps over the input text, one output file.
// `delay_ms` simulates slow work; ctx.sleep ends early when the run is cancelled.

export default {
  steps: [
    {
      name: 'normalize',
      async run(ctx) {
        const { text, delay_ms: delayMs } = ctx.input;
        if (Number.isInteger(delayMs) && delayMs > 0) await ctx.sleep(delayMs);
        return { text: String(text).trim().replace(/\s+/g, ' ') };
      },
    },
    {
      name: 'analyze',
      run(ctx) {
        const text = ctx.steps.normalize.text;
        const words = text === '' ? [] : text.toLowerCase().split(' ').map((w) => w.replace(/[^\p{L}\p{N}'-]/gu, ''));
        const counts = new Map();
        for (const w of words) if (w !== '') counts.set(w, (counts.get(w) ?? 0) + 1);
        const topWords = [...counts.entries()]
          .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
          .slice(0, 5)
          .map(([w]) => w);
        return { words: words.filter((w) => w !== '').length, characters: text.length, topWords };
      },
    },
    {
      name: 'report',
      async run(ctx) {
        const { text } = ctx.steps.normalize;
        const { words, characters, topWords } = ctx.steps.analyze;
        const body = `# Text report\n\n- words: ${words}\n- characters: ${characters}\n- top words: ${topWords.join(', ')}\n\n> ${text}\n`;
        await ctx.files.write('report.md', body, 'text/markdown');
        return { file: 'report.md' };
      },
    },
  ],
  output(ctx) {
    return { text: ctx.steps.normalize.text, ...ctx.steps.analyze, report: ctx.steps.report.file };
  },
};
