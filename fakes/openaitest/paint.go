package openaitest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxPictureSide is the largest side, in pixels, the fake paints.
const maxPictureSide = 4096

// imageRequestBody is a /v1/images/generations request.
type imageRequestBody struct {
	Model          string `json:"model"`
	Prompt         string `json:"prompt"`
	N              *int   `json:"n"`
	Size           string `json:"size"`
	ResponseFormat string `json:"response_format"`
	Quality        string `json:"quality"`
	Style          string `json:"style"`
}

// PaintColor is the colour of the picture the fake paints for prompt:
// one of the palette's, by a hash of the prompt.
func PaintColor(prompt string) string {
	h := fnv.New32a()
	h.Write([]byte(prompt))
	return palette[h.Sum32()%uint32(len(palette))].name
}

// SetImageLinks makes /v1/images/generations answer each picture as a
// link (data[0].url) instead of b64_json, whatever the request asked: to
// the fake itself when base is "", else under base (another host, which a
// client should refuse to follow). on false restores b64_json answers; a
// request asking response_format url gets a link to the fake either way.
func (s *Server) SetImageLinks(on bool, base string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.media.links, s.media.linkBase = on, strings.TrimRight(base, "/")
}

// parseSize reads a WxH size.
func parseSize(size string) (w, h int, ok bool) {
	ws, hs, found := strings.Cut(size, "x")
	w, errW := strconv.Atoi(ws)
	h, errH := strconv.Atoi(hs)
	if !found || errW != nil || errH != nil || w < 1 || h < 1 || w > maxPictureSide || h > maxPictureSide {
		return 0, 0, false
	}
	return w, h, true
}

// handleImages serves POST /v1/images/generations: JSON {model, prompt, n
// (1 or absent), size (WxH, default 1024x1024), response_format (b64_json,
// the default here, or url)}, answered with a PNG of that size in one
// colour (PaintColor) and the prompt as revised_prompt.
func (s *Server) handleImages(w http.ResponseWriter, r *http.Request) {
	req := newRequest(r)
	var body imageRequestBody
	err := json.NewDecoder(r.Body).Decode(&body)
	req.Model, req.Prompt, req.Size, req.ResponseFormat = body.Model, body.Prompt, body.Size, body.ResponseFormat
	if body.N != nil {
		req.N = *body.N
	}
	req = s.record(req)
	if !s.authorized(w, r) {
		return
	}
	size := body.Size
	if size == "" {
		size = "1024x1024"
	}
	width, height, sizeOK := parseSize(size)
	switch {
	case err != nil:
		writeError(w, http.StatusBadRequest, -1, "We could not parse the JSON body of your request.")
		return
	case body.Model == "":
		writeError(w, http.StatusBadRequest, -1, "Missing required parameter: 'model'.")
		return
	case strings.TrimSpace(body.Prompt) == "":
		writeError(w, http.StatusBadRequest, -1, "Missing required parameter: 'prompt'.")
		return
	case body.N != nil && *body.N != 1:
		writeError(w, http.StatusBadRequest, -1, "Invalid 'n': the fake paints one picture per request (n=1).")
		return
	case !sizeOK:
		writeError(w, http.StatusBadRequest, -1, fmt.Sprintf("Invalid 'size': '%s' is not WxH with sides of 1 to %d pixels.", size, maxPictureSide))
		return
	case body.ResponseFormat != "" && body.ResponseFormat != "b64_json" && body.ResponseFormat != "url":
		writeError(w, http.StatusBadRequest, -1, "Invalid 'response_format': '"+body.ResponseFormat+"'. Supported values are: 'url' and 'b64_json'.")
		return
	}
	a, ok := s.mediaAnswer(w, r, ImagesPath)
	if !ok {
		return
	}
	item := map[string]any{"revised_prompt": body.Prompt}
	picture := Picture(PaintColor(body.Prompt), width, height)
	s.mu.Lock()
	links, base := s.media.links, s.media.linkBase
	if links || body.ResponseFormat == "url" {
		s.media.pictureSeq++
		name := fmt.Sprintf("picture-%d.png", s.media.pictureSeq)
		if base == "" || !links {
			base = s.srv.URL + strings.TrimSuffix(pictureFilesPath, "/")
			s.media.pictures[name] = picture
		}
		item["url"] = base + "/" + name
	} else {
		item["b64_json"] = base64.StdEncoding.EncodeToString(picture)
	}
	s.mu.Unlock()
	data := []any{item}
	if a.Fault == FaultEmpty {
		data = []any{}
	}
	out, _ := json.Marshal(map[string]any{"created": time.Now().Unix(), "data": data})
	writeMedia(w, a, "application/json", out, "application/json", []byte(`{"created": 1, "data": [{"b64_json": tru`))
}

// handlePictureFile serves a picture an image answer linked to.
func (s *Server) handlePictureFile(w http.ResponseWriter, r *http.Request) {
	s.record(newRequest(r))
	s.mu.Lock()
	picture, ok := s.media.pictures[r.PathValue("name")]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, -1, "No such picture.")
		return
	}
	w.Header().Set("Content-Type", "image/png")
	_, _ = w.Write(picture)
}
