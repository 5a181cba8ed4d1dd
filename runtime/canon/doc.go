// Package canon holds the canonical formatting rules that both sides of
// the AIR boundary apply and must apply identically: the compiler when it
// precomputes bytes (key order of generated hashers), the runtime when it
// writes audit hashes, effect reports, grant checks and vault names. The
// contract is the earlier JavaScript implementation, so the rules are
// JavaScript's:
//
//   - strings quoted as JSON.stringify quotes them (AppendString), or as
//     encoding/json.Marshal does where that is the form to match
//     (AppendStringHTML);
//   - strings ordered and measured in UTF-16 code units, as
//     Array.prototype.sort and String.prototype.length do (CompareUTF16,
//     UTF16Len);
//   - numbers written as Number.prototype.toString and JSON.stringify
//     write them (AppendNumber);
//   - JSON text made printable ASCII for headers and source literals
//     (ASCII);
//   - decoded values written as JSON by one encoder (Value) whose number
//     rule is a named mode: NumberExact for the effect report, which
//     echoes arguments as they came, NumberJS for the audit hash, which
//     hashes what JavaScript parsed;
//   - JSON's white space, number literals and string literals scanned by
//     the grammar (SkipSpace, NumberEnd, IsNumber, Unquote), for the
//     readers of AIR, of specs and of call bodies;
//   - the input keys whose values the audit hash redacts (SensitiveKey):
//     lowering records them in AIR for generated hashers, the audit hash
//     applies the rule to the decoded arguments.
//
// It imports only the standard library, so the compiler may import it
// (internal/archtest allows it) and every runtime package can.
package canon
