package web

// memoryRoutes registers the memory pages (not built yet).
func (s *Server) memoryRoutes() {}
