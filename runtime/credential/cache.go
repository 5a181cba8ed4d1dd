package credential

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/anvil-dev/anvil/runtime/fswatch"
	"github.com/anvil-dev/anvil/runtime/vault"
)

// maxCachedCreds bounds the credential cache; past it the cache starts over.
const maxCachedCreds = 4096

// credCache keeps decrypted vault records so that a granted call does not
// read and decrypt its record every time. An entry is used only while the
// record file is the very file it was read from: every vault write (this
// gateway's /connect routes, an OAuth refresh, another process) renames a
// new file into place, so a changed or removed record is read again at once.
// With a watch on the vault directory an entry stays valid while the
// directory's stamp is the one it was read under (the gateway polls the
// watcher at the start of each request), and is read again after any change
// notification; without a watch, the record file is stat-ed on each use
// (same inode, size and modification time). Entries hold secrets in memory
// only, as a call does anyway.
type credCache struct {
	watch *fswatch.Handle // the vault directory; nil or unwatched: stat every call
	mu    sync.Mutex
	m     map[credKey]credEntry
}

type credKey struct{ sub, connector, account string }

type credEntry struct {
	fi    os.FileInfo
	stamp uint64 // the watch stamp fi was checked under
	conn  vault.Connection
}

// get returns the record for the coordinates as Store.Get does (a copy the
// caller may keep), from the cache when the file is unchanged.
func (cc *credCache) get(st *vault.Store, sub, connector, account string) (*vault.Connection, error) {
	key := credKey{sub, connector, account}
	stamp := cc.watch.Stamp()
	cc.mu.Lock()
	e, cached := cc.m[key]
	cc.mu.Unlock()
	if cached && stamp != 0 && e.stamp == stamp {
		conn := e.conn
		return &conn, nil
	}
	path := filepath.Join(st.Dir(), vault.FileName(sub, connector, account))
	fi, serr := os.Stat(path)
	// Unwatched, an unchanged stat vouches for the record; watched, a new
	// stamp means something in the vault changed, so the record is read again.
	if stamp == 0 && serr == nil && cached && os.SameFile(e.fi, fi) && e.fi.Size() == fi.Size() && e.fi.ModTime().Equal(fi.ModTime()) {
		conn := e.conn
		return &conn, nil
	}
	conn, err := st.Get(sub, connector, account)
	cc.mu.Lock()
	defer cc.mu.Unlock()
	switch {
	case err != nil || serr != nil:
		delete(cc.m, key)
	default:
		if cc.m == nil || len(cc.m) >= maxCachedCreds {
			cc.m = make(map[credKey]credEntry)
		}
		// fi and stamp were taken before the read: if the file changed in
		// between, the next check differs and the record is read again.
		cc.m[key] = credEntry{fi: fi, stamp: stamp, conn: *conn}
	}
	return conn, err
}
