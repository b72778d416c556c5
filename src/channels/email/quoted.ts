// What a person wrote in a reply, without what they quoted: lines starting with `>` are dropped, and
// everything from the first line that introduces the quoted mail ("On … wrote:", Outlook's
// "-----Original Message-----" or its underscore rule) or the signature delimiter "-- " is cut.

const ORIGINAL_MESSAGE = /^\s*-{2,}\s*original message\s*-{2,}\s*$/i;
const OUTLOOK_RULE = /^\s*_{10,}\s*$/;
const WROTE = /wrote:\s*$/i;
const ON = /^\s*On\s/;
const SIGNATURE = /^-- $/;

export function stripQuoted(text: string): string {
  const lines = text.split(/\r?\n|\r/);
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (ORIGINAL_MESSAGE.test(line) || OUTLOOK_RULE.test(line) || SIGNATURE.test(line)) break;
    // "On Mon, 23 Nov 2026 at 10:00, Airlock <airlock+…@example.com> wrote:", which some mail
    // programs wrap over two lines.
    if (ON.test(line) && (WROTE.test(line) || WROTE.test(lines[i + 1] ?? ""))) break;
    if (line.trimStart().startsWith(">")) continue;
    kept.push(line);
  }
  return kept.join("\n").trim();
}
