package canon

import "testing"

func TestSensitiveKey(t *testing.T) {
	// Sensitive matching is ASCII-only like JavaScript's non-Unicode /i
	// (U+017F "ſ" does not fold to "s").
	for key, want := range map[string]bool{
		"password": true, "PassPhrase": true, "bypass": true, "client_secret": true,
		"refresh_token": true, "authorization": true, "Authorisation": true,
		"apiKey": true, "api-key": true, "API_KEY": true, "set-cookie": true,
		"credentials": true, "private_key": true, "PRIVATEKEY": true, "sessionid": true,
		"owner": false, "repo": false, "api": false, "key": false, "private": false,
		"pasword": false, "ſecret": false, "tokeN": true, "": false,
		"a_very_long_input_name_that_is_longer_than_the_stack_buffer_of_sixty_four_bytes_token": true,
	} {
		if got := SensitiveKey(key); got != want {
			t.Errorf("SensitiveKey(%q) = %v, want %v", key, got, want)
		}
	}
}
