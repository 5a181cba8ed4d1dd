package auth

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Inbound auth modes (ANVIL_INBOUND_AUTH_MODE).
const (
	// ModeNone serves without inbound authentication (the default).
	ModeNone = "none"
	// ModeBranchyard verifies per-turn EdDSA tokens and enforces their grant.
	ModeBranchyard = "branchyard"
	// ModeOIDC verifies OAuth 2.1 access tokens of the OpenID providers an
	// identity policy trusts, and grants what its rules give their claims
	// (runtime/identity/oidc, runtime/policy).
	ModeOIDC = "oidc"
)

// Environment variables read by [ConfigFromEnv].
const (
	EnvMode     = "ANVIL_INBOUND_AUTH_MODE"
	EnvIssuer   = "ANVIL_INBOUND_ISSUER"
	EnvAudience = "ANVIL_INBOUND_AUDIENCE"
	EnvJWKSURI  = "ANVIL_INBOUND_JWKS_URI"
	EnvLeeway   = "ANVIL_INBOUND_LEEWAY_SECONDS"
	// EnvPolicyFile is the identity policy of oidc mode.
	EnvPolicyFile = "ANVIL_INBOUND_POLICY_FILE"
)

// Leeway bounds.
const (
	DefaultLeeway = 60 * time.Second
	MaxLeeway     = 300 * time.Second
)

// Config is the inbound auth configuration.
type Config struct {
	// Mode is ModeNone, ModeBranchyard or ModeOIDC.
	Mode string
	// Issuer is the yard's issuer: its server URL, or branchyard:local:<yard id>.
	Issuer string
	// Audience is the gateway's canonical /mcp URL: https, or http on
	// localhost, 127.0.0.1 or [::1]; no userinfo, no fragment.
	Audience string
	// JWKSURI is the yard's key set: an https: URL (cached five minutes) or a
	// file: URL with an absolute path (read on every verification).
	JWKSURI string
	// Leeway is the clock skew allowed on exp, nbf and iat: 0 to 300 s.
	// ConfigFromEnv defaults it to 60 s.
	Leeway time.Duration
	// PolicyFile is the identity policy (oidc mode only): the trusted
	// issuers, which take the place of Issuer and JWKSURI, and the rules.
	PolicyFile string
}

// Enabled reports whether tokens must be verified (Mode is branchyard or
// oidc).
func (c Config) Enabled() bool { return c.Mode == ModeBranchyard || c.Mode == ModeOIDC }

// ConfigFromEnv reads the inbound auth configuration through getenv (pass
// os.Getenv). ANVIL_INBOUND_AUTH_MODE defaults to none, in which case nothing
// else is read. In branchyard mode ANVIL_INBOUND_ISSUER,
// ANVIL_INBOUND_AUDIENCE and ANVIL_INBOUND_JWKS_URI are required; in oidc
// mode ANVIL_INBOUND_AUDIENCE and ANVIL_INBOUND_POLICY_FILE (the issuers are
// the policy's). ANVIL_INBOUND_LEEWAY_SECONDS (0 to 300) defaults to 60.
// Errors wrap [ErrConfig] and name the variable at fault.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	mode := strings.TrimSpace(getenv(EnvMode))
	if mode == "" {
		mode = ModeNone
	}
	switch mode {
	case ModeNone:
		return Config{Mode: ModeNone, Leeway: DefaultLeeway}, nil
	case ModeBranchyard, ModeOIDC:
	default:
		return Config{}, fmt.Errorf("%w: %s=%q is not supported by this gateway; use none, branchyard or oidc", ErrConfig, EnvMode, mode)
	}
	c := Config{
		Mode:       mode,
		Issuer:     strings.TrimSpace(getenv(EnvIssuer)),
		Audience:   strings.TrimSpace(getenv(EnvAudience)),
		JWKSURI:    strings.TrimSpace(getenv(EnvJWKSURI)),
		PolicyFile: strings.TrimSpace(getenv(EnvPolicyFile)),
		Leeway:     DefaultLeeway,
	}
	if s := strings.TrimSpace(getenv(EnvLeeway)); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || time.Duration(n)*time.Second > MaxLeeway {
			return Config{}, fmt.Errorf("%w: %s must be a whole number of seconds from 0 to 300", ErrConfig, EnvLeeway)
		}
		c.Leeway = time.Duration(n) * time.Second
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Validate checks a configuration. ModeNone is always valid; ModeBranchyard
// needs an issuer, an audience that is https (or http on a loopback host)
// without userinfo or fragment, a JWKS URI that is https: or file:, and a
// leeway from 0 to 300 s; ModeOIDC the audience, the leeway and a policy
// file, and neither an issuer nor a JWKS URI (the policy lists its
// issuers). Errors wrap [ErrConfig] and name the environment variable the
// field comes from.
func (c Config) Validate() error {
	switch c.Mode {
	case ModeNone:
		return nil
	case ModeBranchyard:
	case ModeOIDC:
		return c.validateOIDC()
	default:
		return fmt.Errorf("%w: %s=%q is not supported by this gateway; use none, branchyard or oidc", ErrConfig, EnvMode, c.Mode)
	}
	for _, v := range []struct{ name, value string }{{EnvIssuer, c.Issuer}, {EnvAudience, c.Audience}, {EnvJWKSURI, c.JWKSURI}} {
		if v.value == "" {
			return fmt.Errorf("%w: %s is required when %s=branchyard", ErrConfig, v.name, EnvMode)
		}
	}
	if err := checkAudience(c.Audience); err != nil {
		return err
	}
	if _, err := parseJWKSURI(c.JWKSURI); err != nil {
		return err
	}
	if c.Leeway < 0 || c.Leeway > MaxLeeway {
		return fmt.Errorf("%w: %s must be a whole number of seconds from 0 to 300", ErrConfig, EnvLeeway)
	}
	return nil
}

func (c Config) validateOIDC() error {
	for _, v := range []struct{ name, value string }{{EnvAudience, c.Audience}, {EnvPolicyFile, c.PolicyFile}} {
		if v.value == "" {
			return fmt.Errorf("%w: %s is required when %s=oidc", ErrConfig, v.name, EnvMode)
		}
	}
	for _, v := range []struct{ name, value string }{{EnvIssuer, c.Issuer}, {EnvJWKSURI, c.JWKSURI}} {
		if v.value != "" {
			return fmt.Errorf("%w: %s is not read when %s=oidc: list the issuers (and any jwks_uri) in %s", ErrConfig, v.name, EnvMode, EnvPolicyFile)
		}
	}
	if err := checkAudience(c.Audience); err != nil {
		return err
	}
	if c.Leeway < 0 || c.Leeway > MaxLeeway {
		return fmt.Errorf("%w: %s must be a whole number of seconds from 0 to 300", ErrConfig, EnvLeeway)
	}
	return nil
}

func checkAudience(aud string) error {
	u, err := url.Parse(aud)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("%w: %s must be an absolute https: URL (or http: on localhost, 127.0.0.1 or [::1])", ErrConfig, EnvAudience)
	}
	if u.User != nil || u.Fragment != "" || strings.Contains(aud, "#") {
		return fmt.Errorf("%w: %s must not carry userinfo or a fragment", ErrConfig, EnvAudience)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		switch strings.ToLower(u.Hostname()) {
		case "localhost", "127.0.0.1", "::1":
			return nil
		}
	}
	return fmt.Errorf("%w: %s must be https:, or http: only on localhost, 127.0.0.1 or [::1]", ErrConfig, EnvAudience)
}

// jwksSource is a parsed JWKS URI: a file path or an https URL.
type jwksSource struct {
	path string // for file:
	url  string // for https:
}

func parseJWKSURI(s string) (jwksSource, error) {
	u, err := url.Parse(s)
	if err != nil {
		return jwksSource{}, fmt.Errorf("%w: %s must be an https: or file: URL", ErrConfig, EnvJWKSURI)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		if u.Host == "" {
			return jwksSource{}, fmt.Errorf("%w: %s must be an https: URL with a host", ErrConfig, EnvJWKSURI)
		}
		return jwksSource{url: u.String()}, nil
	case "file":
		if u.Opaque != "" || !strings.HasPrefix(u.Path, "/") || (u.Host != "" && u.Host != "localhost") {
			return jwksSource{}, fmt.Errorf("%w: %s must be a file: URL with an absolute path (file:///…)", ErrConfig, EnvJWKSURI)
		}
		return jwksSource{path: u.Path}, nil
	}
	return jwksSource{}, fmt.Errorf("%w: %s must be an https: or file: URL", ErrConfig, EnvJWKSURI)
}
