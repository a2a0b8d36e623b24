package models

import (
	"context"
	"fmt"

	"gorm.io/gorm/clause"
)

// Persona returns the persona stored for userKey, or ErrNotFound.
func (s *Store) Persona(ctx context.Context, userKey string) (Persona, error) {
	var p Persona
	err := s.db.WithContext(ctx).Where("user_key = ?", userKey).Take(&p).Error
	return p, notFound(err)
}

// SetPersona stores how a user wants to be named and described.
func (s *Store) SetPersona(ctx context.Context, p Persona) error {
	p.UpdatedAt = s.now()
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "user_key"}},
		DoUpdates: clause.AssignmentColumns([]string{"name", "description", "updated_at"}),
	}).Create(&p).Error
	if err != nil {
		return fmt.Errorf("models: set persona: %w", err)
	}
	return nil
}

// Setting returns a stored value, or ErrNotFound.
func (s *Store) Setting(ctx context.Context, key string) (string, error) {
	var st Setting
	err := s.db.WithContext(ctx).Where("key = ?", key).Take(&st).Error
	return st.Value, notFound(err)
}

// PutSetting stores a value under key.
func (s *Store) PutSetting(ctx context.Context, key, value string) error {
	st := Setting{Key: key, Value: value, UpdatedAt: s.now()}
	return s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "key"}},
		DoUpdates: clause.AssignmentColumns([]string{"value", "updated_at"}),
	}).Create(&st).Error
}
