-- An address's keys by their end, so a rotation can find and end the key in
-- its grace period (revoked_at in the future) without reading every key.
CREATE INDEX keys_email ON keys (email, revoked_at);
