package openaitest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"strings"
)

// RefuseDimensions is the message OpenAI answers, with HTTP 400 and type
// invalid_request_error, when a model whose vectors have a fixed length
// (text-embedding-ada-002) is asked for "dimensions".
const RefuseDimensions = "This model does not support specifying dimensions."

// SetFixedLength makes model (every model when model is "") behave like
// text-embedding-ada-002: it answers vectors of length n only, and a
// request carrying "dimensions" gets OpenAI's HTTP 400 (RefuseDimensions).
// n <= 0 removes the switch, so that the model takes "dimensions" again
// (the default for every model).
func (s *Server) SetFixedLength(model string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n <= 0 {
		delete(s.fixedLength, model)
		return
	}
	if s.fixedLength == nil {
		s.fixedLength = make(map[string]int)
	}
	s.fixedLength[model] = n
}

// handleEmbeddings serves POST /v1/embeddings with unit vectors derived from
// a hash of each input, so equal inputs always get equal vectors.
func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request) {
	req := newRequest(r)
	var body embeddingRequestBody
	err := json.NewDecoder(r.Body).Decode(&body)
	if err == nil {
		req.Model, req.Dimensions = body.Model, body.Dimensions
		req.Input, err = embeddingInputs(body.Input)
	}
	req = s.record(req)
	if !s.authorized(w, r) {
		return
	}
	if err != nil || len(req.Input) == 0 {
		writeError(w, http.StatusBadRequest, -1, "'input' must be a string or an array of strings.")
		return
	}
	if req.Model == "" {
		req.Model = DefaultModel
	}

	s.mu.Lock()
	dim, countPrompt, embed, f := s.dimension, s.promptTokens, s.embedder, s.embedFault
	fixed, isFixed := s.fixedLength[req.Model]
	if !isFixed {
		fixed, isFixed = s.fixedLength[""]
	}
	s.mu.Unlock()
	if !s.fault(w, r, f) {
		return
	}
	switch {
	case isFixed && body.Dimensions > 0:
		// OpenAI's answer for text-embedding-ada-002 and other models
		// whose length is fixed: a 400 whose param is null.
		writeError(w, http.StatusBadRequest, -1, RefuseDimensions)
		return
	case isFixed:
		dim = fixed
	case body.Dimensions > 0:
		dim = body.Dimensions
	}

	resp := embeddingList{Object: "list", Model: req.Model}
	for i, in := range req.Input {
		vec := embed(in, dim)
		var out any = vec
		if body.EncodingFormat == "base64" {
			b := make([]byte, 0, 4*len(vec))
			for _, f := range vec {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
			}
			out = base64.StdEncoding.EncodeToString(b)
		}
		resp.Data = append(resp.Data, embeddingData{Object: "embedding", Index: i, Embedding: out})
	}
	resp.Usage.PromptTokens = countPrompt(strings.Join(req.Input, "\n"))
	resp.Usage.TotalTokens = resp.Usage.PromptTokens
	writeJSON(w, http.StatusOK, resp)
}

// embeddingInputs decodes an embedding input: a string, an array of
// strings, or token arrays, which are kept as their JSON text.
func embeddingInputs(raw json.RawMessage) ([]string, error) {
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, nil
	}
	var many []json.RawMessage
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, err
	}
	out := make([]string, len(many))
	for i, m := range many {
		if json.Unmarshal(m, &out[i]) != nil {
			out[i] = string(m)
		}
	}
	return out, nil
}

// Embedding returns the unit vector of length dim the server gives input.
func Embedding(input string, dim int) []float32 {
	vec := make([]float32, dim)
	var norm float64
	var block [sha256.Size]byte
	for i := range vec {
		if i%(sha256.Size/2) == 0 {
			h := sha256.New()
			h.Write(binary.BigEndian.AppendUint32(nil, uint32(i)))
			h.Write([]byte(input))
			h.Sum(block[:0])
		}
		j := 2 * (i % (sha256.Size / 2))
		v := float64(binary.BigEndian.Uint16(block[j:]))/32767.5 - 1
		vec[i] = float32(v)
		norm += v * v
	}
	if norm > 0 {
		scale := 1 / math.Sqrt(norm)
		for i := range vec {
			vec[i] = float32(float64(vec[i]) * scale)
		}
	}
	return vec
}

// handleNotFound answers any other path the way the API does.
func (s *Server) handleNotFound(w http.ResponseWriter, r *http.Request) {
	s.record(newRequest(r))
	writeError(w, http.StatusNotFound, -1, "Invalid URL ("+r.Method+" "+r.URL.Path+")")
}
