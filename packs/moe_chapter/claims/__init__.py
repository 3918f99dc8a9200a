"""The chapter's claims, one module per statement group; every module here registers its claims on import."""
