package web

// chatRoutes registers the chat pages (not built yet).
func (s *Server) chatRoutes() {}
