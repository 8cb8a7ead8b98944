"""Policy what-if (`arbiter policy simulate` / `diff`): replay the recorded history under a candidate profile."""
