// Names of people, agents and groups are compared in one normal form, so `Alice`, `alice`, ` alice `,
// the fullwidth `ＡＬＩＣＥ` and `ali\u200Bce` (with an invisible zero-width space) are one identity:
// one vote toward a quorum, and never an approver of their own request. A name that mixes scripts
// (`аlice` with a Cyrillic `а`) is refused where it enters (identityProblem), since no normal form
// can tell it apart from the Latin one a reader sees.

/** Code points that render as nothing (zero-width space, joiner and non-joiner, soft hyphen, word
 * joiner, BOM, variation selectors, bidi controls...): dropped, so they cannot make a second name
 * that looks like the first. */
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu;

/** The normal form of an identity: default-ignorable code points dropped, Unicode NFKC (compatibility
 * forms such as fullwidth letters become the plain ones), surrounding spaces trimmed, inner runs of
 * white space folded to one space, lower case. A lower-case ASCII name is its own normal form, so names
 * stored by earlier versions (NFC, lower case) still match. Idempotent. */
export function normalizeIdentity(name: string): string {
  return (
    name
      .normalize("NFKC")
      .replace(INVISIBLE, "")
      .trim()
      .replace(/\s+/g, " ")
      .toLowerCase()
      // Lower-casing can leave a string that is not in NFKC (rarely): normalise once more so that the
      // normal form of a normal form is itself.
      .normalize("NFKC")
  );
}

/** True when two names are the same identity. */
export function sameIdentity(a: string, b: string): boolean {
  return normalizeIdentity(a) === normalizeIdentity(b);
}

// --- mixed scripts ---------------------------------------------------------------------------------
// Unicode's "single script" test (UTS #39, section 5.1): every character's Script_Extensions, less
// Common and Inherited (digits, punctuation, spaces, combining marks), must share at least one script.
// Han counts as part of Japanese (with kana), Korean (with Hangul) and Han with Bopomofo, so `山田たろう`
// is one name.

/** The scripts of Unicode 15 (ISO 15924 codes). A name this engine's regular expressions do not know
 * is skipped (and its characters then count as unknown, below). */
const SCRIPT_CODES = [
  "Adlm Aghb Ahom Arab Armi Armn Avst Bali Bamu Bass Batk Beng Bhks Bopo Brah Brai Bugi Buhd Cakm",
  "Cans Cari Cham Cher Chrs Copt Cpmn Cprt Cyrl Deva Diak Dogr Dsrt Dupl Egyp Elba Elym Ethi Geor",
  "Glag Gong Gonm Goth Gran Grek Gujr Guru Hang Hani Hano Hatr Hebr Hira Hluw Hmng Hmnp Hung Ital",
  "Java Kali Kana Kawi Khar Khmr Khoj Kits Knda Kthi Lana Laoo Latn Lepc Limb Lina Linb Lisu Lyci",
  "Lydi Mahj Maka Mand Mani Marc Medf Mend Merc Mero Mlym Modi Mong Mroo Mtei Mult Mymr Nagm Nand",
  "Narb Nbat Newa Nkoo Nshu Ogam Olck Orkh Orya Osge Osma Ougr Palm Pauc Perm Phag Phli Phlp Phnx",
  "Plrd Prti Rjng Rohg Runr Samr Sarb Saur Sgnw Shaw Shrd Sidd Sind Sinh Sogd Sogo Sora Soyo Sund",
  "Sylo Syrc Tagb Takr Tale Talu Taml Tang Tavt Telu Tfng Tglg Thaa Thai Tibt Tirh Tnsa Toto Ugar",
  "Vaii Vith Wara Wcho Xpeo Xsux Yezi Yiii Zanb",
]
  .join(" ")
  .split(" ");

const SCRIPTS: { code: string; test: RegExp }[] = SCRIPT_CODES.flatMap((code) => {
  try {
    return [{ code, test: new RegExp(`\\p{Script_Extensions=${code}}`, "u") }];
  } catch {
    return [];
  }
});

/** Characters that belong to no script in particular: their Script_Extensions is Common or Inherited. */
const NEUTRAL = /^[\p{Script_Extensions=Zyyy}\p{Script_Extensions=Zinh}]$/u;

/** Scripts that are written together, per UTS #39's augmented script sets. */
const AUGMENT: Record<string, string[]> = {
  Hani: ["Hanb", "Jpan", "Kore"],
  Hira: ["Jpan"],
  Kana: ["Jpan"],
  Hang: ["Kore"],
  Bopo: ["Hanb"],
};

const SCRIPT_NAMES: Record<string, string> = {
  Latn: "Latin",
  Cyrl: "Cyrillic",
  Grek: "Greek",
  Armn: "Armenian",
  Geor: "Georgian",
  Cher: "Cherokee",
  Arab: "Arabic",
  Hebr: "Hebrew",
  Deva: "Devanagari",
  Hani: "Han",
  Hira: "Hiragana",
  Kana: "Katakana",
  Hang: "Hangul",
  Thai: "Thai",
};

/** Scripts already looked up, by character (about 160 tests each); bounded, as names are untrusted. */
const known = new Map<string, Set<string> | undefined>();
const KNOWN_MAX = 10_000;

/** The (augmented) scripts of one character; undefined for Common and Inherited ones. */
function scriptsOf(ch: string): Set<string> | undefined {
  if (known.has(ch)) return known.get(ch);
  const out = lookUpScripts(ch);
  if (known.size < KNOWN_MAX) known.set(ch, out);
  return out;
}

function lookUpScripts(ch: string): Set<string> | undefined {
  if (NEUTRAL.test(ch)) return undefined;
  const out = new Set<string>();
  for (const s of SCRIPTS) {
    if (!s.test.test(ch)) continue;
    out.add(s.code);
    for (const more of AUGMENT[s.code] ?? []) out.add(more);
  }
  // A character of no known script (unassigned, or newer than this engine) stands for itself.
  if (out.size === 0) out.add(`U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase()}`);
  return out;
}

/** Why this name cannot be an identity, or undefined when it can: it must keep a character once
 * invisible ones are dropped, and must not mix scripts (checked on its normal form). */
export function identityProblem(name: string): string | undefined {
  const normal = normalizeIdentity(name);
  if (normal === "") return "is empty once invisible characters are removed";
  // Plain ASCII is Latin and Common only: the usual case costs one test.
  if (/^[\x20-\x7e]*$/.test(normal)) return undefined;
  let common: Set<string> | undefined;
  let first = { ch: "", scripts: new Set<string>() };
  for (const ch of normal) {
    const scripts = scriptsOf(ch);
    if (scripts === undefined) continue;
    if (common === undefined) {
      common = scripts;
      first = { ch, scripts };
      continue;
    }
    const both = new Set([...common].filter((s) => scripts.has(s)));
    if (both.size === 0) {
      const a = nameOf(first.scripts);
      const b = nameOf(scripts);
      return `mixes scripts (\`${first.ch}\` is ${a}, \`${ch}\` is ${b}); a name must be written in one script, so that letters that look alike cannot pose as another person`;
    }
    common = both;
  }
  return undefined;
}

/** A readable name for a character's scripts: the first one it has. */
function nameOf(scripts: Set<string>): string {
  const code = [...scripts][0] ?? "";
  return SCRIPT_NAMES[code] ?? code;
}
