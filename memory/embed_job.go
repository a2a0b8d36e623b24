package memory

import (
	"context"
	"fmt"
	"strings"

	"troupe/models"
	"troupe/text"
)

// KindEmbed is the job that writes the vectors of a chat's new perceptions
// and its space's new beliefs.
const KindEmbed = "embed"

// EmbedStore is what the embedding job reads and writes; *models.Store
// satisfies it.
type EmbedStore interface {
	PendingVectors(ctx context.Context, chatID, model string, limit int) ([]models.VectorItem, error)
	WriteVectors(ctx context.Context, vs []models.RecallVector) (int, error)
	VectorsOwed(ctx context.Context, chatID, model string) (bool, error)
}

// embedBatch is how many texts one /embeddings call carries.
const embedBatch = 64

// maxEmbedRounds bounds the batches of one run; a longer backlog is left
// to the next run.
const maxEmbedRounds = 200

// UseVectors turns on the embedding job (and the cache's upkeep on
// /forget) with v's embedder and model; owe is called after every recorder
// run or reflection that wrote, wherever it ran (a job, /record,
// /reflect), to enqueue the chat's embedding job.
func (s *Service) UseVectors(v *Vectors, owe func(ctx context.Context, chatID string) error) {
	s.vectors, s.oweVectors = v, owe
}

// wroteItems enqueues the embedding of what a recorder run or reflection
// wrote; a failed enqueue is found again by the sweeper.
func (s *Service) wroteItems(ctx context.Context, chatID string, res Result, err error) {
	if err != nil || res.Outcome != Written || s.oweVectors == nil {
		return
	}
	if qerr := s.oweVectors(ctx, chatID); qerr != nil {
		s.log.Warn("enqueue embedding", "chat_id", chatID, "err", qerr)
	}
}

// Embed writes the vectors of the chat's perceptions, and of its space's
// beliefs, that have none of the configured model yet, in batches of
// embedBatch texts per /embeddings call. A vector comes back of whatever
// length the model gives and is stored so. Skipped when embeddings are off
// or nothing is owed; failed (retryable, nothing lost) when the endpoint
// fails, with the batches before it kept.
func (s *Service) Embed(ctx context.Context, chatID string) (Result, error) {
	res, err := s.embedChat(ctx, chatID)
	return s.record(ctx, KindEmbed, chatID, res, err)
}

// EmbeddingOwed reports whether the chat has items without a vector (false
// when embeddings are off).
func (s *Service) EmbeddingOwed(ctx context.Context, chat models.Chat) (bool, error) {
	es, ok := s.store.(EmbedStore)
	if s.vectors == nil || !ok {
		return false, nil
	}
	return es.VectorsOwed(ctx, chat.ID, s.vectors.Model)
}

func (s *Service) embedChat(ctx context.Context, chatID string) (Result, error) {
	es, ok := s.store.(EmbedStore)
	if s.vectors == nil || !ok {
		return Result{Outcome: Skipped, Reason: "embeddings are off"}, nil
	}
	model := s.vectors.Model
	written := 0
	for round := 0; round < maxEmbedRounds; round++ {
		items, err := es.PendingVectors(ctx, chatID, model, embedBatch)
		if err != nil {
			return Result{}, err
		}
		if len(items) == 0 {
			break
		}
		texts := make([]string, len(items))
		for i, it := range items {
			texts[i] = text.CutRunes(strings.TrimSpace(it.Text), maxEmbedRunes)
			if texts[i] == "" {
				texts[i] = "…"
			}
		}
		done := waiting(ctx)
		vecs, err := s.vectors.Embedder.Embed(ctx, texts)
		done()
		if err != nil {
			return Result{}, fmt.Errorf("memory: embed chat %s: %w", chatID, err)
		}
		if len(vecs) != len(items) {
			return Result{}, fmt.Errorf("memory: embed chat %s: %d vectors for %d texts", chatID, len(vecs), len(items))
		}
		rows := make([]models.RecallVector, 0, len(items))
		for i, it := range items {
			if len(vecs[i]) == 0 {
				return Result{}, fmt.Errorf("memory: embed chat %s: an empty vector", chatID)
			}
			rows = append(rows, models.RecallVector{ItemID: it.ID, SpaceID: it.SpaceID, Character: it.Character, Model: model,
				Kind: it.Kind, ChatID: it.ChatID, Dims: len(vecs[i]), Vector: models.EncodeVector(vecs[i])})
		}
		n, err := es.WriteVectors(ctx, rows)
		if err != nil {
			return Result{}, err
		}
		written += n
		if n == 0 {
			// Every item of the batch went while it was embedded (a
			// /forget): what is left is found by the next run.
			break
		}
	}
	if written == 0 {
		return Result{Outcome: Skipped, Reason: "nothing to embed"}, nil
	}
	return Result{Outcome: Written, Product: fmt.Sprintf("%d vectors of chat %s", written, chatID)}, nil
}
