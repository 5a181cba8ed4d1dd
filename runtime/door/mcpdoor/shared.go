package mcpdoor

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/anvil-dev/anvil/runtime/store"
)

// Sessions shared by replicas (issue 20). With a shared store, a session a
// replica opens on initialize is also recorded in the store (its id's
// digest, bound to the token's fingerprint), so any replica accepts it:
//
//   - the session's own replica serves it as before (the SDK holds it);
//   - another replica checks the store (same fingerprint, not idle), then
//     answers a plain tools/call on its fast path and anything else through
//     a stateless SDK handler (a temporary session per request), DELETE by
//     deleting the record; a GET event stream stays on the session's own
//     replica (405 elsewhere).
//
// DELETE on any replica deletes the record, so the session ends for every
// replica but its own, which also forgets it when DELETE reaches it.

// sharedSessions is the store half of a Door; nil without a shared
// store.
type sharedSessions struct {
	st        store.Store
	stateless http.Handler // the door's stateless SDK handler
	logf      func(format string, args ...any)
}

// sessionTimeout bounds one session-record operation.
const sessionTimeout = 5 * time.Second

// shareSessions makes m record its sessions in st and accept the other
// replicas' sessions.
func (m *Door) shareSessions(st store.Store, logf func(string, ...any)) {
	m.shared = &sharedSessions{st: st, logf: logf, stateless: m.stateless}
}

// recordSession stores a session this replica opened.
func (s *sharedSessions) recordSession(sid, fingerprint string) {
	ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
	defer cancel()
	if err := s.st.CreateSession(ctx, sid, fingerprint); err != nil {
		s.logf("anvil: recording MCP session for other replicas failed (it works on this one): %v", err)
	}
}

// checkForeign accepts a session another replica opened: 0 when the store
// holds it for fingerprint, else the refusal checkSession gives.
func (s *sharedSessions) checkForeign(sid, fingerprint string) (status, code int, msg string) {
	ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
	defer cancel()
	err := s.st.CheckSession(ctx, sid, fingerprint)
	switch {
	case err == nil:
		return 0, 0, ""
	case errors.Is(err, store.ErrForbidden):
		return http.StatusForbidden, -32001, "This MCP session belongs to a different authenticated caller."
	case errors.Is(err, store.ErrUnavailable):
		return http.StatusServiceUnavailable, -32000, "The gateway's session store is unavailable; try again shortly."
	}
	return http.StatusNotFound, -32001, "Session not found; send initialize to start a new one."
}

// forgetShared deletes a session's record (DELETE on any replica).
func (s *sharedSessions) forgetShared(sid string) {
	ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
	defer cancel()
	if err := s.st.DeleteSession(ctx, sid); err != nil && !errors.Is(err, store.ErrNotFound) {
		s.logf("anvil: deleting a shared MCP session record failed: %v", err)
	}
}

// serveForeign answers a request, other than a fast-path tools/call, on a
// session another replica opened (r already carries the caller).
func (s *sharedSessions) serveForeign(w http.ResponseWriter, r *http.Request, sid string) {
	switch r.Method {
	case http.MethodDelete:
		s.forgetShared(sid)
		w.WriteHeader(http.StatusNoContent)
	case http.MethodGet:
		w.Header().Set("Allow", "POST, DELETE")
		jsonrpcError(w, http.StatusMethodNotAllowed, nil, -32000, "This session's event stream is served by the replica that opened it.")
	default:
		s.stateless.ServeHTTP(w, r)
	}
}
