package storage

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"strings"
)

// continueToken is the state of a paged list between pages. On the wire it is
// base64url (no padding) of its JSON, like kube-apiserver's, but it carries a
// MAC made with a key random to each store, so a token that was altered, was
// issued by another store or for another prefix is rejected instead of being
// trusted. A memory store's key lives as long as the process; a durable
// store's (OpenBolt) is kept in its file, so its tokens survive a restart.
type continueToken struct {
	// Rev is the revision every page is read at; 0 continues at the latest
	// revision (the token of an expired continuation).
	Rev uint64 `json:"rv"`
	// Start is the key to resume from, relative to the list's prefix.
	Start string `json:"start"`
	// Count, when set, is how many objects exist at Rev under the prefix from
	// Start on; it lets later pages report RemainingItemCount without
	// counting again (the snapshot at Rev never changes).
	Count *int64 `json:"n,omitempty"`
	MAC   []byte `json:"mac"`
}

const macLen = 16

func (m *Memory) continueMAC(prefix string, t *continueToken) []byte {
	h := hmac.New(sha256.New, m.macKey[:])
	var buf [8]byte
	writeString := func(s string) {
		binary.BigEndian.PutUint64(buf[:], uint64(len(s)))
		h.Write(buf[:])
		h.Write([]byte(s))
	}
	writeString(prefix)
	writeString(t.Start)
	binary.BigEndian.PutUint64(buf[:], t.Rev)
	h.Write(buf[:])
	if t.Count != nil {
		binary.BigEndian.PutUint64(buf[:], uint64(*t.Count))
		h.Write([]byte{1})
		h.Write(buf[:])
	} else {
		h.Write([]byte{0})
	}
	return h.Sum(nil)[:macLen]
}

// encodeContinue returns the token resuming a list of prefix at rev from the
// key start (which has prefix).
func (m *Memory) encodeContinue(prefix string, rev uint64, start string, count *int64) string {
	t := continueToken{Rev: rev, Start: strings.TrimPrefix(start, prefix), Count: count}
	t.MAC = m.continueMAC(prefix, &t)
	data, err := json.Marshal(&t)
	if err != nil {
		panic("storage: encoding continue token: " + err.Error()) // cannot happen: plain fields
	}
	return base64.RawURLEncoding.EncodeToString(data)
}

// decodeContinue checks and decodes a token issued for prefix. Its errors are
// CodeInvalidContinue with a Message in kube-apiserver's words ("continue key
// is not valid: …").
func (m *Memory) decodeContinue(prefix, token string) (*continueToken, error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return nil, invalidContinue(err.Error())
	}
	var t continueToken
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, invalidContinue(err.Error())
	}
	if len(t.MAC) != macLen || !hmac.Equal(t.MAC, m.continueMAC(prefix, &t)) {
		return nil, invalidContinue("not issued by this server for this collection")
	}
	return &t, nil
}

func invalidContinue(reason string) *Error {
	return &Error{Code: CodeInvalidContinue, Message: "continue key is not valid: " + reason}
}
