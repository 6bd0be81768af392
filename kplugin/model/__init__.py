"""What kplugin knows and validates: Kubernetes versions and their API facts, specs, projects, configurations."""
