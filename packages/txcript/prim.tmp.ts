import { generateLargeJsonl } from './test/fixtures/grok-bot/generate.ts';
const text = generateLargeJsonl(50*1024*1024);
const mb = Buffer.byteLength(text)/1048576;
const cpu = () => { const u = process.cpuUsage(); return (u.user+u.system)/1000; };
function t(name: string, f: () => unknown) { let best=Infinity; let r; for (let i=0;i<3;i++){const c=cpu(); r=f(); best=Math.min(best,cpu()-c);} console.log(name.padEnd(30), best.toFixed(0),'ms cpu', (mb/(best/1000)).toFixed(0),'MB/s', r); }
const STR = /(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const STR2 = /[^"\\\u0000-\u001f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\u0000-\u001f]*)*"/y;
const NUM = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
// returns true if s[start,end) is exactly one JSON object (with surrounding ws)
function validObject(s: string, start: number, end: number, re: RegExp): boolean {
  let i = start;
  const ws = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;
  while (i < end && ws(s.charCodeAt(i))) i++;
  if (s.charCodeAt(i) !== 123) return false;
  // stack of containers: 1 = object, 2 = array; state machine
  const stack: number[] = [];
  // states: 0 expect value, 1 expect key or '}', 2 expect key, 3 expect ':', 4 after value (expect , or close), 5 expect value or ']'
  let state = 0;
  while (i < end) {
    const c = s.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13) { i++; continue; }
    switch (state) {
      case 1: case 2:
        if (c === 34) { re.lastIndex = i + 1; if (!re.test(s) || re.lastIndex > end) return false; i = re.lastIndex; state = 3; continue; }
        if (c === 125 && state === 1) { stack.pop(); i++; state = 4; if (stack.length === 0) { while (i < end && ws(s.charCodeAt(i))) i++; return i === end; } continue; }
        return false;
      case 3:
        if (c !== 58) return false; i++; state = 0; continue;
      case 4:
        if (c === 44) { i++; state = stack[stack.length-1] === 1 ? 2 : 0; continue; }
        if ((c === 125 && stack[stack.length-1] === 1) || (c === 93 && stack[stack.length-1] === 2)) { stack.pop(); i++; if (stack.length === 0) { while (i < end && ws(s.charCodeAt(i))) i++; return i === end; } continue; }
        return false;
      case 0: case 5:
        if (c === 123) { stack.push(1); i++; state = 1; continue; }
        if (c === 91) { stack.push(2); i++; state = 5; continue; }
        if (c === 93 && state === 5) { stack.pop(); i++; state = 4; continue; }
        if (c === 34) { re.lastIndex = i + 1; if (!re.test(s) || re.lastIndex > end) return false; i = re.lastIndex; state = 4; continue; }
        if (c === 116) { if (!s.startsWith('true', i)) return false; i += 4; state = 4; continue; }
        if (c === 102) { if (!s.startsWith('false', i)) return false; i += 5; state = 4; continue; }
        if (c === 110) { if (!s.startsWith('null', i)) return false; i += 4; state = 4; continue; }
        NUM.lastIndex = i; if (!NUM.test(s) || NUM.lastIndex > end) return false; i = NUM.lastIndex; state = 4; continue;
    }
  }
  return false;
}
function run(re: RegExp) { let p=0,n=0; while(true){const nl=text.indexOf('\n',p); if(nl<0)break; if (validObject(text,p,nl,re)) n++; p=nl+1;} return n; }
t('validator STR', () => run(STR));
t('validator STR2', () => run(STR2));
t('lines+slice', () => { let p=0; const a:string[]=[]; while(true){const nl=text.indexOf('\n',p); if(nl<0)break; a.push(text.slice(p,nl)); p=nl+1;} return a.length; });
function validObject2(s: string, start: number, end: number): boolean {
  let i = start;
  let c = s.charCodeAt(i);
  while (c === 32 || c === 9 || c === 13) c = s.charCodeAt(++i);
  if (c !== 123) return false;
  let depth = 0; // bitstack: bit=1 object
  let bits = 0;
  let state = 0;
  while (i < end) {
    c = s.charCodeAt(i);
    if (c === 32 || c === 9 || c === 13 || c === 10) { i++; continue; }
    if (c === 34) {
      // string
      if (state !== 0 && state !== 5 && state !== 1 && state !== 2) return false;
      i++;
      for (;;) {
        if (i >= end) return false;
        const d = s.charCodeAt(i++);
        if (d === 34) break;
        if (d < 32) return false;
        if (d === 92) {
          const e = s.charCodeAt(i++);
          if (e === 117) {
            for (let k = 0; k < 4; k++) { const h = s.charCodeAt(i++) | 32; if (!((h >= 48 && h <= 57) || (h >= 97 && h <= 102))) return false; }
          } else if (!(e === 34 || e === 92 || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116)) return false;
        }
      }
      state = state === 1 || state === 2 ? 3 : 4;
      continue;
    }
    switch (state) {
      case 1: // expect key or }
        if (c === 125) { i++; depth--; bits >>>= 1; state = 4; if (depth === 0) return rest(s, i, end); continue; }
        return false;
      case 2: return false;
      case 3: if (c !== 58) return false; i++; state = 0; continue;
      case 4:
        if (c === 44) { i++; state = (bits & 1) === 1 ? 2 : 0; continue; }
        if (c === 125 ? (bits & 1) === 1 : c === 93 && (bits & 1) === 0) { i++; depth--; bits >>>= 1; if (depth === 0) return rest(s, i, end); continue; }
        return false;
      default: // 0 or 5: value
        if (c === 123) { if (++depth > 30) return false; bits = (bits << 1) | 1; i++; state = 1; continue; }
        if (c === 91) { if (++depth > 30) return false; bits <<= 1; i++; state = 5; continue; }
        if (c === 93 && state === 5) { i++; depth--; bits >>>= 1; state = 4; if (depth === 0) return rest(s, i, end); continue; }
        if (c === 116) { if (!s.startsWith('true', i)) return false; i += 4; state = 4; continue; }
        if (c === 102) { if (!s.startsWith('false', i)) return false; i += 5; state = 4; continue; }
        if (c === 110) { if (!s.startsWith('null', i)) return false; i += 4; state = 4; continue; }
        { // number
          if (c === 45) c = s.charCodeAt(++i);
          if (c === 48) c = s.charCodeAt(++i);
          else if (c >= 49 && c <= 57) { do c = s.charCodeAt(++i); while (c >= 48 && c <= 57); }
          else return false;
          if (c === 46) { c = s.charCodeAt(++i); if (!(c >= 48 && c <= 57)) return false; do c = s.charCodeAt(++i); while (c >= 48 && c <= 57); }
          if (c === 101 || c === 69) { c = s.charCodeAt(++i); if (c === 43 || c === 45) c = s.charCodeAt(++i); if (!(c >= 48 && c <= 57)) return false; do c = s.charCodeAt(++i); while (c >= 48 && c <= 57); }
          if (i > end) return false;
          state = 4; continue;
        }
    }
  }
  return false;
}
function rest(s: string, i: number, end: number): boolean { while (i < end) { const c = s.charCodeAt(i++); if (!(c === 32 || c === 9 || c === 13 || c === 10)) return false; } return true; }
t('validator charcode', () => { let p=0,n=0; while(true){const nl=text.indexOf('\n',p); if(nl<0)break; if (validObject2(text,p,nl)) n++; p=nl+1;} return n; });
const ascii = text.replace(/[^\x00-\x7f]/g, '?');
t('validator charcode ascii', () => { let p=0,n=0; while(true){const nl=ascii.indexOf('\n',p); if(nl<0)break; if (validObject2(ascii,p,nl)) n++; p=nl+1;} return n; });
