// Package models owns troupe's schema: the GORM models of every table and the
// Store that reads and writes them, each multi-row write in one transaction.
// It runs the same on PostgreSQL and on the embedded SQLite file.
package models
