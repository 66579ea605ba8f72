// Owns "a" or "an" before a word the code fills into a message ("Cannot restore an invoice", "An ach
// method", "is an Int8Array"): a message template writes `${withArticle(noun)}`, never `a ${noun}`.
// At the bottom of the module graph (it imports nothing), like src/errors.ts.

/** Words that begin with a vowel letter but the sound of "you" or "won": they take "a". */
const VOWEL_LETTER_CONSONANT_SOUND = /^(uni|use|usu|uti|ure|eu|ewe|one|once)/i;
/** Words that begin with a silent h: they take "an". */
const SILENT_H = /^(hour|honest|honou?r|heir)/i;
/** An abbreviation read letter by letter ("an HTTP URL", "an SMS"): these letters' names begin with a vowel sound. */
const VOWEL_SOUND_LETTERS = 'AEFHILMNORSX';

/** "a" or "an" for `word`, by how it is read aloud. */
export function articleFor(word: string): 'a' | 'an' {
  const first = word.trimStart();
  if (!first) return 'a';
  const initials = /^[A-Z]{2,}(?![a-z])/.exec(first)?.[0];
  if (initials) return VOWEL_SOUND_LETTERS.includes(initials[0]) ? 'an' : 'a';
  if (SILENT_H.test(first)) return 'an';
  if (VOWEL_LETTER_CONSONANT_SOUND.test(first)) return 'a';
  return /^[aeiou]/i.test(first) ? 'an' : 'a';
}

/** `word` after its article: "an invoice", "a payout", "an HTTP URL". */
export function withArticle(word: string): string {
  return `${articleFor(word)} ${word}`;
}

/** The same, capitalised to begin a sentence: "An ach method". */
export function withCapitalArticle(word: string): string {
  const article = articleFor(word);
  return `${article === 'an' ? 'An' : 'A'} ${word}`;
}
