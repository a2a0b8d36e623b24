package memory

// UseForgetFiles registers fn to remove what a chat keeps outside the store
// (the originals of pictures and voice notes, media.keep): ForgetChat calls
// it once the chat is gone from the store, so /forget, `troupe memory
// forget` and the web inspector's forget, which all go through ForgetChat,
// remove them alike. Call it before the service is used.
func (s *Service) UseForgetFiles(fn func(chatID string) error) {
	s.forgetFiles = fn
}

// forgetKept runs the registered removal for chatID. A failure is logged,
// not returned: the chat is already gone from the store, and a retried
// forget would find no chat to forget.
func (s *Service) forgetKept(chatID string) {
	if s.forgetFiles == nil {
		return
	}
	if err := s.forgetFiles(chatID); err != nil {
		s.log.Error("forget: remove the chat's kept files", "chat_id", chatID, "err", err)
	}
}
