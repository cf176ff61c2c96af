"""Drafters: anything that proposes the next few tokens for the target to check."""
