"""``kplugin snapshot``: a real cluster's scheduling state written as a scenario (job:
connect, read, write; anonymize: what each field becomes; anonymizer: applies it)."""
