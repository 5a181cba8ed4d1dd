package canon

import "bytes"

// Redacted is the value that replaces a sensitive key's value in the audit
// hash's canonical JSON.
const Redacted = "***"

// sensitiveParts are the lowercase substrings of
// /pass(word|phrase)?|secret|token|authori[sz]ation|api[_-]?key|cookie|credential|private[_-]?key|session/i.
// JavaScript's non-Unicode /i folds only ASCII letters onto these, so an
// ASCII-lowercased substring test is the same predicate as RegExp.test.
var sensitiveParts = [][]byte{
	[]byte("pass"), []byte("secret"), []byte("token"), []byte("authorization"), []byte("authorisation"),
	[]byte("apikey"), []byte("api_key"), []byte("api-key"), []byte("cookie"), []byte("credential"),
	[]byte("privatekey"), []byte("private_key"), []byte("private-key"), []byte("session"),
}

// SensitiveKey reports whether the audit hash redacts the value of an
// object key (at any depth of the arguments): whether the key contains,
// ASCII case-insensitively, password, passphrase, pass, secret, token,
// authorization/authorisation, api key, cookie, credential, private key or
// session. It is the contract's rule (the audit log's input_sha256); lowering
// applies it to every input once and records the result in AIR
// (air.Input.Sensitive), which generated hashers read, and the audit hash
// applies it to the decoded arguments.
func SensitiveKey(key string) bool {
	var buf [64]byte
	lower := buf[:0]
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower = append(lower, c)
	}
	for _, p := range sensitiveParts {
		if bytes.Contains(lower, p) {
			return true
		}
	}
	return false
}
