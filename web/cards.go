package web

// cardRoutes registers the cards pages (not built yet).
func (s *Server) cardRoutes() {}
