package models

import (
	"context"
	"fmt"
)

// SetChannelVoice sets whether the channel's replies are also sent spoken
// (/voice on|off). ErrNotFound when the channel has no row.
func (s *Store) SetChannelVoice(ctx context.Context, channelID string, on bool) error {
	res := s.db.WithContext(ctx).Model(&Channel{}).Where("id = ?", channelID).Update("voice", on)
	if res.Error != nil {
		return fmt.Errorf("models: voice of channel %s: %w", channelID, res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// ChannelVoice reports whether the channel's replies are also sent spoken:
// false for a channel with no row.
func (s *Store) ChannelVoice(ctx context.Context, channelID string) (bool, error) {
	var on []bool
	if err := s.db.WithContext(ctx).Model(&Channel{}).Where("id = ?", channelID).Limit(1).Pluck("voice", &on).Error; err != nil {
		return false, fmt.Errorf("models: voice of channel %s: %w", channelID, err)
	}
	return len(on) == 1 && on[0], nil
}
