"""What a bash command line runs, read with a real bash grammar: what shell rules match against."""
