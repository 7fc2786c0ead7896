import t from 'tap';
import { escapeChar, showInvisible } from '../../src/audit/visible.js';

// One line per character class a reviewer must see: [input, one-line form, multi-line form].
const cases: Record<string, [string, string, string]> = {
  'right-to-left override': ['rm \u202Eexe.txt', 'rm \\u202Eexe.txt', 'rm \\u202Eexe.txt'],
  'left-to-right embedding': ['a\u202Ab', 'a\\u202Ab', 'a\\u202Ab'],
  'pop directional formatting': ['a\u202Cb', 'a\\u202Cb', 'a\\u202Cb'],
  'right-to-left isolate': ['a\u2067b', 'a\\u2067b', 'a\\u2067b'],
  'first strong isolate': ['a\u2068b', 'a\\u2068b', 'a\\u2068b'],
  'pop directional isolate': ['a\u2069b', 'a\\u2069b', 'a\\u2069b'],
  'left-to-right mark': ['a\u200Eb', 'a\\u200Eb', 'a\\u200Eb'],
  'right-to-left mark': ['a\u200Fb', 'a\\u200Fb', 'a\\u200Fb'],
  'arabic letter mark': ['a\u061Cb', 'a\\u061Cb', 'a\\u061Cb'],
  'zero-width space': ['a\u200Bb', 'a\\u200Bb', 'a\\u200Bb'],
  'zero-width non-joiner': ['a\u200Cb', 'a\\u200Cb', 'a\\u200Cb'],
  'zero-width joiner': ['a\u200Db', 'a\\u200Db', 'a\\u200Db'],
  'word joiner': ['a\u2060b', 'a\\u2060b', 'a\\u2060b'],
  'byte order mark': ['\uFEFFa', '\\uFEFFa', '\\uFEFFa'],
  'soft hyphen (Cf)': ['a\u00ADb', 'a\\u00ADb', 'a\\u00ADb'],
  'tag character, past the BMP': ['a\u{E0041}b', 'a\\u{E0041}b', 'a\\u{E0041}b'],
  'Hangul filler (ignorable)': ['a\u3164b', 'a\\u3164b', 'a\\u3164b'],
  'variation selector (ignorable)': ['a\uFE0Fb', 'a\\uFE0Fb', 'a\\uFE0Fb'],
  NUL: ['a\u0000b', 'a\\u0000b', 'a\\u0000b'],
  escape: ['a\u001B[2Jb', 'a\\u001B[2Jb', 'a\\u001B[2Jb'],
  DEL: ['a\u007Fb', 'a\\u007Fb', 'a\\u007Fb'],
  'C1 control (CSI)': ['a\u009Bb', 'a\\u009Bb', 'a\\u009Bb'],
  'carriage return, escaped even in a preview': ['a\rb', 'a\\u000Db', 'a\\u000Db'],
  'line feed: kept in a preview only': ['a\nb', 'a\\u000Ab', 'a\nb'],
  'tab: kept in a preview only': ['a\tb', 'a\\u0009b', 'a\tb'],
  'line separator': ['a\u2028b', 'a\\u2028b', 'a\\u2028b'],
  'paragraph separator': ['a\u2029b', 'a\\u2029b', 'a\\u2029b'],
  'lone surrogate': ['a\uD800b', 'a\\uD800b', 'a\\uD800b'],
  'plain ASCII kept': [
    'DELETE /repos/acme/app?x=1',
    'DELETE /repos/acme/app?x=1',
    'DELETE /repos/acme/app?x=1',
  ],
  'letters of any script kept': ['é ü ж שלום 日本', 'é ü ж שלום 日本', 'é ü ж שלום 日本'],
  'emoji (a surrogate pair) kept': ['a😀b', 'a😀b', 'a😀b'],
  'a backslash is left as it is': ['C:\\tmp \\u202E', 'C:\\tmp \\u202E', 'C:\\tmp \\u202E'],
};

for (const [name, [input, one, multi]] of Object.entries(cases)) {
  t.equal(showInvisible(input), one, `${name}: one line`);
  t.equal(showInvisible(input, { multiline: true }), multi, `${name}: a preview`);
}

t.test('no character of a format or control class survives, whatever the code point', async (t) => {
  const hidden = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;
  let left = 0;
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const ch = String.fromCodePoint(cp);
    if (!hidden.test(ch)) continue;
    if (hidden.test(showInvisible(ch)) || showInvisible(ch) !== escapeChar(ch)) left++;
  }
  t.equal(left, 0);
});
