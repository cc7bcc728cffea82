import { decodeJsonlBytes, grokBotFromCommon, grokBotToCommon, parseGrokBotJsonl, renderGrokBotJsonl } from './src/harness/grok-bot/index.ts';
import { generateLargeJsonl } from './test/fixtures/grok-bot/generate.ts';
const text = generateLargeJsonl(50*1024*1024);
const cpu = () => { const u = process.cpuUsage(); return (u.user+u.system)/1000; };
for (let i = 0; i < 2; i++) {
let c = cpu();
const records = parseGrokBotJsonl(text, 'x').records; const a = cpu() - c; c = cpu();
const common = grokBotToCommon(records, { sessionId: 'bench' }); const b = cpu() - c; c = cpu();
const back = grokBotFromCommon(common); const d = cpu() - c; c = cpu();
const out = renderGrokBotJsonl(back); const e = cpu() - c; c = cpu();
const out2 = renderGrokBotJsonl(records); const f = cpu() - c;
console.log({ parse: a, toCommon: b, fromCommon: d, renderBuilt: e, renderParsed: f, same: out === text });
}
