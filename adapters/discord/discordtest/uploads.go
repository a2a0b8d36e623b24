package discordtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
)

// Uploads: a message with files comes as multipart/form-data, as Discord
// takes it (and discordgo sends it): a part payload_json with the JSON
// body, and a part files[n] per file, with its file name and content type.

// uploadsKey carries a request's files from serveREST to the route that
// makes the message.
type uploadsKey struct{}

// uploads are the files that came with r.
func uploads(r *http.Request) []Attachment {
	a, _ := r.Context().Value(uploadsKey{}).([]Attachment)
	return a
}

// errTooLarge: the files are over the upload limit.
var errTooLarge = fmt.Errorf("request entity too large")

// splitMultipart returns a multipart request's JSON payload and files; a
// request that is not multipart comes back as it is. It fails on a body
// Discord would refuse: no boundary, a broken part, files[n] without a file
// name, files over limit bytes in all.
func splitMultipart(contentType string, body []byte, limit int) ([]byte, []Attachment, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" {
		return body, nil, nil
	}
	if params["boundary"] == "" {
		return nil, nil, fmt.Errorf("multipart body without a boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var payload []byte
	var files []Attachment
	total := 0
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("multipart body: %w", err)
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, nil, fmt.Errorf("multipart part %q: %w", p.FormName(), err)
		}
		switch name := p.FormName(); {
		case name == "payload_json":
			payload = data
		case strings.HasPrefix(name, "files[") && strings.HasSuffix(name, "]"), name == "file":
			if p.FileName() == "" {
				return nil, nil, fmt.Errorf("part %s has no file name", name)
			}
			total += len(data)
			if total > limit {
				return nil, nil, errTooLarge
			}
			files = append(files, Attachment{Filename: p.FileName(), ContentType: p.Header.Get("Content-Type"), Data: data})
		}
	}
	return payload, files, nil
}

// withUploads is r carrying files for its route.
func withUploads(r *http.Request, files []Attachment) *http.Request {
	if len(files) == 0 {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), uploadsKey{}, files))
}

// storeUploads puts a message's uploaded files on the CDN under channelID.
func (s *Server) storeUploads(channelID string, files []Attachment) []Attachment {
	if len(files) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Attachment, 0, len(files))
	for _, f := range files {
		out = append(out, s.storeFileLocked(channelID, f))
	}
	return out
}
