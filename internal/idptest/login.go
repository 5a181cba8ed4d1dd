package idptest

import (
	"errors"
	"html/template"
	"net/http"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// loginPath is the login page zitadel redirects an authorization request
// to (op.Client.LoginURL). zitadel leaves the login UI to its user: this
// one is a plain HTML form with the request ID, a username and a password,
// and two buttons, log in or deny. A good login sends the browser back to
// zitadel's callback, which issues the code; deny answers access_denied.
const loginPath = "/login"

// Form field names; the Browser fills them in.
const (
	fieldRequestID = "authRequestID"
	fieldUsername  = "username"
	fieldPassword  = "password"
	fieldAction    = "action"
	actionLogin    = "login"
	actionDeny     = "deny"
)

var loginPage = template.Must(template.New("login").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Log in</title></head>
<body>
<h1>Log in to {{.ClientID}}</h1>
<p>Scopes requested: {{range .Scopes}}<code>{{.}}</code> {{end}}</p>
{{if .Error}}<p id="error" role="alert">{{.Error}}</p>{{end}}
<form method="post" action="` + loginPath + `">
<input type="hidden" name="` + fieldRequestID + `" value="{{.ID}}">
<label>Username <input type="text" name="` + fieldUsername + `" autocomplete="username"></label>
<label>Password <input type="password" name="` + fieldPassword + `" autocomplete="current-password"></label>
<button type="submit" name="` + fieldAction + `" value="` + actionLogin + `">Log in</button>
<button type="submit" name="` + fieldAction + `" value="` + actionDeny + `">Deny</button>
</form>
</body></html>
`))

type loginView struct {
	ID       string
	ClientID string
	Scopes   []string
	Error    string
}

// loginHandler serves the login page. It runs behind zitadel's issuer
// interceptor, so op.AuthCallbackURL finds the issuer on the context.
func (p *Provider) loginHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		switch r.Method {
		case http.MethodGet:
			p.renderLogin(w, r.FormValue(fieldRequestID), "", http.StatusOK)
		case http.MethodPost:
			p.submitLogin(w, r)
		default:
			w.Header().Set("Allow", "GET, POST")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	})
}

func (p *Provider) renderLogin(w http.ResponseWriter, id, msg string, status int) {
	clientID, scopes, err := p.store.requestInfo(id)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = loginPage.Execute(w, loginView{ID: id, ClientID: clientID, Scopes: scopes, Error: msg})
}

func (p *Provider) submitLogin(w http.ResponseWriter, r *http.Request) {
	// The form was parsed, within maxFormBytes, by formInterceptor.
	id := r.PostFormValue(fieldRequestID)
	if r.PostFormValue(fieldAction) == actionDeny {
		ar, err := p.store.AuthRequestByID(r.Context(), id)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		op.AuthRequestError(w, r, ar, oidc.ErrAccessDenied(), p.op)
		_ = p.store.DeleteAuthRequest(r.Context(), id) // a denied request cannot be logged in later
		return
	}
	err := p.store.login(id, r.PostFormValue(fieldUsername), r.PostFormValue(fieldPassword))
	switch {
	case errors.Is(err, errBadCredentials):
		p.renderLogin(w, id, err.Error(), http.StatusUnauthorized)
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadRequest)
	default:
		http.Redirect(w, r, op.AuthCallbackURL(p.op)(r.Context(), id), http.StatusFound)
	}
}
