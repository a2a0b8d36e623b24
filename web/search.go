package web

// searchRoutes registers the search pages (not built yet).
func (s *Server) searchRoutes() {}
