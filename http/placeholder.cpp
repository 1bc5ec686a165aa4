// Keeps mg_http non-empty until its first sources land.
