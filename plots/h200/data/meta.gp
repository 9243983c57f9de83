# written by build/report data; strings from the data are single-quoted (gp_quote)
run = 'results/h200/20261130T045458Z.csv'
run_id = '20261130T045458Z'
gpu = 'h200'
gpu_name = 'NVIDIA H200'
mode = 'cold'
grid_shape = 'batch = 16384 / S, heads = 2048 / D, bf16'
grid_note = 'batch = 16384 / S, heads = 2048 / D, bf16, cold mode'
npanels = 4
array panel_file[4] = ['plots/h200/data/panel_D64_full.dat', 'plots/h200/data/panel_D64_causal.dat', 'plots/h200/data/panel_D128_full.dat', 'plots/h200/data/panel_D128_causal.dat']
array panel_title[4] = ['D = 64, non-causal', 'D = 64, causal', 'D = 128, non-causal', 'D = 128, causal']
nvariants = 5
array variant_name[5] = ['naive', 'inplace', 'cudnn_sdpa', 'flash_mma', 'flash_hopper']
have_cudnn = 1
have_naive = 1
seq_min = 512
seq_max = 16384
array panel_n_ms[4] = [30, 30, 30, 30]
array panel_n_tflops[4] = [30, 30, 30, 30]
array panel_n_mem[4] = [30, 30, 30, 30]
array panel_n_naive[4] = [30, 30, 30, 30]
array panel_n_energy[4] = [0, 0, 0, 0]
have_energy = 0
headline_n = 2
array headline_show[5] = [0, 0, 0, 1, 1]
array panel_n_headline[4] = [12, 12, 12, 12]
headline_ymin = 0.4973
headline_ymax = 1.18611
headline_note = 'not shown: naive, inplace, 3.7–17× slower than cudnn_sdpa'
peak_tflops = 798.2
tflops_max = 655.66
mem_unit = 'GiB'
mem_per_unit = 1024
mem_max = 32864
mem_note = 'on the zero line: cudnn_sdpa, flash_mma, flash_hopper (at most 2 MiB at any S)'
have_ratio = 1
baseline = 'results/h200/baselines/baseline-20261130T045924Z.csv'
baseline_run_id = '20261130T042431Z'
ratio_rows = 250
ratio_throttled = 1
ratio_slower = 0
ratio_ymin = 0.871793
ratio_ymax = 1.07893
ratio_seq_min = 512
ratio_seq_max = 16384
ratio_modes = 'cold graph'
nratio_panels = 4
array ratio_panel_file[4] = ['plots/h200/data/ratio_D64_full.dat', 'plots/h200/data/ratio_D64_causal.dat', 'plots/h200/data/ratio_D128_full.dat', 'plots/h200/data/ratio_D128_causal.dat']
array ratio_panel_title[4] = ['D = 64, non-causal', 'D = 64, causal', 'D = 128, non-causal', 'D = 128, causal']
