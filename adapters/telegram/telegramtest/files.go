package telegramtest

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxDownload is the largest file a bot may download: getFile refuses
// bigger ones ("file is too big").
const maxDownload = 20 << 20

// File is a file the server keeps, as getFile describes it.
type File struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	// FileSize is the size Telegram reports, which a test may set apart
	// from the bytes served.
	FileSize int    `json:"file_size,omitempty"`
	FilePath string `json:"file_path,omitempty"`
}

type storedFile struct {
	File
	data []byte
}

// Download is one request to the file endpoint.
type Download struct {
	// Path is the file_path asked for (the part after the token).
	Path string
	// TokenOK is whether the request carried the bot's token.
	TokenOK bool
	// Code is the HTTP status answered.
	Code int
	At   time.Time
}

// StoreFile keeps data under a new file id in folder (photos, voice,
// documents, music, …) with extension ext, as Telegram keeps what users
// send. size is the file_size reported: 0 reports len(data), a negative
// size none.
func (s *Server) StoreFile(folder, ext string, data []byte, size int) File {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.store(folder, ext, data, size).File
}

// store is StoreFile; s.mu is held.
func (s *Server) store(folder, ext string, data []byte, size int) *storedFile {
	s.fileSeq++
	n := s.fileSeq
	switch {
	case size == 0:
		size = len(data)
	case size < 0:
		size = 0
	}
	f := &storedFile{
		File: File{
			FileID:       fmt.Sprintf("AgACAgIAAxkBAAI%04dfake", n),
			FileUniqueID: fmt.Sprintf("AQAD%04d", n),
			FileSize:     size,
			FilePath:     fmt.Sprintf("%s/file_%d%s", folder, n, ext),
		},
		data: append([]byte(nil), data...),
	}
	s.files[f.FileID] = f
	return f
}

// getFile answers the file's id, size and path, as Telegram does for files
// of up to 20 MB.
func (s *Server) getFile(p url.Values) (any, *apiError) {
	f := s.files[p.Get("file_id")]
	if f == nil {
		return nil, badRequest("invalid file_id")
	}
	if f.FileSize > maxDownload {
		return nil, badRequest("file is too big")
	}
	return f.File, nil
}

// download serves a file's bytes at /file/bot<token>/<file_path>: 404 for
// a wrong token or an unknown path. Faults queued with Fail("download", …)
// strike downloads.
func (s *Server) download(w http.ResponseWriter, r *http.Request, rest string) {
	token, path, _ := strings.Cut(rest, "/")
	s.mu.Lock()
	d := Download{Path: path, TokenOK: token == s.token, At: time.Now()}
	var data []byte
	found := false
	if d.TokenOK && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		for _, f := range s.files {
			if f.FilePath == path {
				data, found = f.data, true
				break
			}
		}
	}
	fault, faulted := s.takeFault("download", url.Values{})
	switch {
	case faulted:
		d.Code = fault.Code
	case found:
		d.Code = http.StatusOK
	default:
		d.Code = http.StatusNotFound
	}
	s.downloads = append(s.downloads, d)
	s.mu.Unlock()
	switch {
	case faulted:
		writeError(w, fault.Code, fault.Description, fault.RetryAfter)
	case !found:
		writeError(w, http.StatusNotFound, "Not Found", 0)
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		if r.Method == http.MethodGet {
			_, _ = w.Write(data)
		}
	}
}

// Downloads returns the requests to the file endpoint, in arrival order.
func (s *Server) Downloads() []Download {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Download(nil), s.downloads...)
}

// FileURL is where the file endpoint serves path, with token (which need
// not be the bot's).
func (s *Server) FileURL(token, path string) string {
	return s.srv.URL + "/file/bot" + token + "/" + path
}
